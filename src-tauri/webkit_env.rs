//! WebKitGTK settings that must be in the environment before the first WebKit process starts.

/// WebKitGTK's DMA-BUF renderer shares the page's pixels with the window through GPU buffers.
/// Where no GPU driver serves it (virtual displays, remote sessions, some NVIDIA setups) it
/// falls back to a software GL stack (Mesa llvmpipe) in the web process: measured under Xvfb
/// here, that costs ~85 MiB RSS and ~80 MiB PSS of the app's total for no visual gain in a
/// table-and-form console, and NVIDIA users know it as a blank window. Switchyard turns it off
/// unless the user has set `WEBKIT_DISABLE_DMABUF_RENDERER` themselves (`=0` turns it back
/// on). Scrolling and rendering stay on WebKit's CPU path, which the e2e screenshots use too.
const DISABLE_DMABUF: &str = "WEBKIT_DISABLE_DMABUF_RENDERER";

/// JavaScriptCore sizes its heap against the machine's RAM: below a quarter of it, the heap
/// may double before the next collection. On a workstation with tens of GiB, the garbage of
/// every DLQ page fetched and every row scrolled past piled up to hundreds of MiB in the web
/// process before a collection ran (`make bench-dlq-scroll`, 90,000 rows scrolled: +298 MiB
/// PSS; with the heap sized against 1 GiB: +143 MiB, the same frame times). The console's own
/// heap is tens of MiB, far below that size. The web process inherits this variable; a value
/// the user set is kept (`0` sizes against the real RAM again).
const JSC_RAM_SIZE: &str = "JSC_forceRAMSize";
const JSC_RAM_BYTES: &str = "1073741824";

pub fn prepare() {
    for (name, value) in [(DISABLE_DMABUF, "1"), (JSC_RAM_SIZE, JSC_RAM_BYTES)] {
        if std::env::var_os(name).is_none() {
            // SAFETY: called first thing in `main`, before the runtime, GTK or any other
            // thread exists, so nothing can read the environment concurrently.
            #[allow(unsafe_code)]
            unsafe {
                std::env::set_var(name, value);
            }
        }
    }
}
