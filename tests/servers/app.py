"""The WSGI app that tests/servers.rs serves with gunicorn under vigil.

/       a quick answer;
/slow   answers after 3 s: a request still in flight when the stop comes;
/leak   starts a `sleep` that outlives the request (the shell that starts
        it in the background exits at once), as an app that shells out
        leaves orphans behind; answers with its pid.
"""

import os
import subprocess
import sys
import time


def app(environ, start_response):
    path = environ.get("PATH_INFO", "/")
    if path == "/slow":
        print(f"app: slow request started in worker {os.getpid()}", file=sys.stderr, flush=True)
        time.sleep(3)
        body = b"slow request done\n"
    elif path == "/leak":
        out = subprocess.run(
            ["sh", "-c", "sleep 1000 </dev/null >/dev/null 2>&1 & echo $!"],
            capture_output=True,
            check=True,
        )
        body = b"leaked sleep " + out.stdout
    else:
        body = b"hello\n"
    start_response("200 OK", [("Content-Type", "text/plain"), ("Content-Length", str(len(body)))])
    return [body]
