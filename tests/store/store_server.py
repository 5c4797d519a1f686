#!/usr/bin/env python3
"""The remote store's test servers, as a CTest fixture (tests/CMakeLists.txt, FIXTURES_SETUP
store_server / FIXTURES_CLEANUP).

  store_server.py setup --dir D     starts them and writes D/servers.json
  store_server.py cleanup --dir D   stops what setup started (by the pids it wrote)

Two servers on loopback ports picked free at setup:

- nginx (Debian's nginx-light) with its own config in D: a WebDAV location `/store/` (PUT and
  DELETE, create_full_put_path on) over the directory D/root/store, the layout of docs/store.md,
  and fixed faults: `/fail500/` answers 500, `/forbidden/` 403, `/moved/<rest>` redirects (302)
  to `/store/<rest>`.
- a fault-injecting server (this file, `serve-faults`), for what nginx cannot do on its own:
  `/flaky/<p>` answers 503 to the first request for each path, then stores and serves like a
  WebDAV server; `/truncate/<p>` promises more bytes than it sends and closes; `/slow/<p>` waits
  5 s before answering 404.

servers.json: {"store": "http://127.0.0.1:P/store", "root": "D/root/store",
"nginx": "http://127.0.0.1:P", "faults": "http://127.0.0.1:Q", "tls": "https://127.0.0.1:T/store",
"ca_bundle": "D/tls/ca.pem", "basic_auth": "tune:<password>", "bearer_token": "<token>"}. Tests use a prefix of their
own under `store` (`<store>/<test name>`), so that they run in parallel.
"""
import argparse
import http.server
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

NGINX_CONF = """\
daemon on;
{user}
worker_processes 1;
pid {d}/nginx.pid;
error_log {d}/error.log;
events {{ worker_connections 256; }}
http {{
  access_log {d}/access.log;
  client_body_temp_path {d}/tmp/body;
  proxy_temp_path {d}/tmp/proxy;
  fastcgi_temp_path {d}/tmp/fastcgi;
  uwsgi_temp_path {d}/tmp/uwsgi;
  scgi_temp_path {d}/tmp/scgi;
  client_max_body_size 512m;
  server {{
    listen 127.0.0.1:{port};
    location /store/ {{
      root {d}/root;
      dav_methods PUT DELETE;
      create_full_put_path on;
      dav_access user:rw group:r all:r;
    }}
    location /basic/ {{
      auth_basic "tune store";
      auth_basic_user_file {d}/htpasswd;
      root {d}/root;
      dav_methods PUT DELETE;
      create_full_put_path on;
    }}
    location /bearer/ {{
      if ($http_authorization != "Bearer {token}") {{ return 401; }}
      root {d}/root;
      dav_methods PUT DELETE;
      create_full_put_path on;
    }}
    location /fail500/ {{ return 500; }}
    location /forbidden/ {{ return 403; }}
    location ~ ^/moved/(.*)$ {{ return 302 http://127.0.0.1:{port}/store/$1; }}
  }}
  server {{
    listen 127.0.0.1:{tls_port} ssl;
    ssl_certificate {d}/tls/server.pem;
    ssl_certificate_key {d}/tls/server.key;
    location /store/ {{
      root {d}/root;
      dav_methods PUT DELETE;
      create_full_put_path on;
    }}
  }}
}}
"""


def openssl(*args, cwd):
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True)


def make_certificates(tls):
    """A CA, and a certificate for 127.0.0.1 it signed, in `tls` (ca.pem, server.pem/.key)."""
    tls.mkdir()
    openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj",
            "/CN=tune test CA", "-keyout", "ca.key", "-out", "ca.pem", cwd=tls)
    openssl("req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=127.0.0.1", "-keyout",
            "server.key", "-out", "server.csr", cwd=tls)
    (tls / "san.ext").write_text("subjectAltName=IP:127.0.0.1\n")
    openssl("x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
            "-CAcreateserial", "-days", "2", "-extfile", "san.ext", "-out", "server.pem", cwd=tls)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_until_up(url, deadline_s=10):
    end = time.time() + deadline_s
    while time.time() < end:
        try:
            urllib.request.urlopen(url, timeout=1)
            return
        except urllib.error.HTTPError:
            return  # it answered
        except OSError:
            time.sleep(0.05)
    raise SystemExit(f"store_server: nothing answers at {url}")


class Faults(http.server.BaseHTTPRequestHandler):
    objects = {}
    seen = set()
    lock = threading.Lock()

    def log_message(self, *args):
        pass

    def reply(self, code, body=b""):
        self.send_response(code)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def flaky_first(self):
        with self.lock:
            first = self.path not in self.seen
            self.seen.add(self.path)
        if first:
            self.reply(503)
        return first

    def do_GET(self):
        if self.path.startswith("/truncate/"):
            self.send_response(200)
            self.send_header("Content-Length", "100000")
            self.end_headers()
            self.wfile.write(b"only a few bytes")
            self.wfile.flush()
            self.close_connection = True
            return
        if self.path.startswith("/slow/"):
            time.sleep(5)
            return self.reply(404)
        if self.path.startswith("/flaky/"):
            if self.flaky_first():
                return
            with self.lock:
                body = self.objects.get(self.path)
            return self.reply(404) if body is None else self.reply(200, body)
        self.reply(404)

    do_HEAD = do_GET

    def do_PUT(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        if self.path.startswith("/flaky/"):
            if self.flaky_first():
                return
            with self.lock:
                self.objects[self.path] = body
            return self.reply(201)
        if self.path.startswith("/slow/"):
            time.sleep(5)
        self.reply(500)


def serve_faults(port):
    server = http.server.ThreadingHTTPServer(("127.0.0.1", port), Faults)
    server.daemon_threads = True
    server.serve_forever()


def setup(d):
    if d.exists():
        cleanup(d)
        shutil.rmtree(d)
    (d / "tmp").mkdir(parents=True)
    (d / "root" / "store").mkdir(parents=True)
    nginx = shutil.which("nginx") or "/usr/sbin/nginx"
    if not os.path.exists(nginx):
        raise SystemExit("store_server: no nginx: install Debian's nginx-light (.ci/packages.txt)")
    port = free_port()
    tls_port = free_port()
    make_certificates(d / "tls")
    password = secrets.token_hex(8)
    token = secrets.token_hex(16)
    hashed = subprocess.run(["openssl", "passwd", "-apr1", password], check=True,
                            capture_output=True, text=True).stdout.strip()
    (d / "htpasswd").write_text(f"tune:{hashed}\n")
    # As root nginx would hand its workers to another user, who could not write the store.
    user = "user root;" if os.geteuid() == 0 else ""
    (d / "nginx.conf").write_text(NGINX_CONF.format(d=d, port=port, user=user, tls_port=tls_port,
                                                          token=token))
    subprocess.run([nginx, "-p", str(d), "-c", str(d / "nginx.conf")], check=True)
    fault_port = free_port()
    with open(d / "faults.log", "w") as log:
        faults = subprocess.Popen([sys.executable, __file__, "serve-faults", "--port",
                                   str(fault_port)], stdout=log, stderr=log,
                                  start_new_session=True)
    (d / "faults.pid").write_text(f"{faults.pid}\n")
    wait_until_up(f"http://127.0.0.1:{port}/store/")
    wait_until_up(f"http://127.0.0.1:{fault_port}/")
    (d / "servers.json").write_text(json.dumps({
        "store": f"http://127.0.0.1:{port}/store",
        "root": str(d / "root" / "store"),
        "nginx": f"http://127.0.0.1:{port}",
        "faults": f"http://127.0.0.1:{fault_port}",
        "tls": f"https://127.0.0.1:{tls_port}/store",
        "ca_bundle": str(d / "tls" / "ca.pem"),
        "basic_auth": f"tune:{password}",
        "bearer_token": token,
    }, indent=2) + "\n")


def stop_pid_file(path, sig):
    try:
        pid = int(path.read_text().strip())
    except (OSError, ValueError):
        return
    try:
        os.kill(pid, sig)
    except ProcessLookupError:
        pass
    path.unlink(missing_ok=True)


def cleanup(d):
    # nginx's master quits with its workers on SIGQUIT (a graceful stop).
    stop_pid_file(d / "nginx.pid", signal.SIGQUIT)
    stop_pid_file(d / "faults.pid", signal.SIGTERM)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("action", choices=["setup", "cleanup", "serve-faults"])
    parser.add_argument("--dir")
    parser.add_argument("--port", type=int)
    args = parser.parse_args()
    if args.action == "serve-faults":
        serve_faults(args.port)
    elif args.action == "setup":
        setup(Path(args.dir).resolve())
    else:
        cleanup(Path(args.dir).resolve())


if __name__ == "__main__":
    main()
