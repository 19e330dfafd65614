// The first frame is painted once a task queued from its animation-frame callback runs (the
// console's UI takes its launch mark the same way, ui/src/App.tsx).
requestAnimationFrame(() => setTimeout(() => window.__TAURI_INTERNALS__.invoke("ready"), 0));
