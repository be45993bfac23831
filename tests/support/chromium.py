"""The headless-Chromium flags shared by the browser tests and the screenshot scripts: headless, no sandbox (CI
runs as root), no GPU, and none of Chromium's own traffic (QUIC, first-run pages, background requests, component
updates, sync), so a test that asserts "no request leaves the page's origin" sees only the page's requests."""

CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--hide-scrollbars",
]
