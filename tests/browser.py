"""A real headless chromium for the tests of html reports: what a page shows once loaded."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


def seen_in_chromium(page: Path, script: str, folder: Path) -> dict:
    """What ``script`` finds in ``page`` opened by a real headless chromium: the script runs when the page has loaded,
    with the page's document as ``d``, and returns a value that JSON can carry."""
    probe = folder / "probe.html"
    probe.write_text(f"""<!DOCTYPE html><html><body><pre id="out">not loaded</pre>
<iframe id="f" src="{page.as_uri()}" width="1200" height="900"></iframe>
<script>
document.getElementById("f").addEventListener("load", () => {{
  const d = document.getElementById("f").contentDocument;
  document.getElementById("out").textContent = JSON.stringify((() => {{ {script} }})());
}});
</script></body></html>""")
    done = subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--allow-file-access-from-files",
                           f"--user-data-dir={folder / 'profile'}", "--virtual-time-budget=10000", "--dump-dom",
                           probe.as_uri()], capture_output=True, text=True, timeout=120)
    found = re.search(r'<pre id="out">([^<]*)</pre>', done.stdout)
    assert found, done.stderr[-2000:]
    return json.loads(found.group(1).replace("&amp;", "&").replace("&lt;", "<").replace("&gt;", ">"))
