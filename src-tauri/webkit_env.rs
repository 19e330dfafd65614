//! WebKitGTK settings that must be in the environment before the first WebKit process starts.

/// WebKitGTK's DMA-BUF renderer shares the page's pixels with the window through GPU buffers.
/// Where no GPU driver serves it (virtual displays, remote sessions, some NVIDIA setups) it
/// falls back to a software GL stack (Mesa llvmpipe) in the web process: measured under Xvfb
/// here, that costs ~85 MiB RSS and ~80 MiB PSS of the app's total for no visual gain in a
/// table-and-form console, and NVIDIA users know it as a blank window. Switchyard turns it off
/// unless the user has set `WEBKIT_DISABLE_DMABUF_RENDERER` themselves (`=0` turns it back
/// on). Scrolling and rendering stay on WebKit's CPU path, which the e2e screenshots use too.
pub fn prepare() {
    const DISABLE_DMABUF: &str = "WEBKIT_DISABLE_DMABUF_RENDERER";
    if std::env::var_os(DISABLE_DMABUF).is_none() {
        // SAFETY: called first thing in `main`, before the runtime, GTK or any other thread
        // exists, so nothing can read the environment concurrently.
        #[allow(unsafe_code)]
        unsafe {
            std::env::set_var(DISABLE_DMABUF, "1");
        }
    }
}
