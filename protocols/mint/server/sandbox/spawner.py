"""Starts MINT's sandboxes for Node (protocols/mint/server/sandbox.ts) and relays their lines.

Why a process of its own: Node starts a child with fork() on its event loop, and fork() copies the
page tables of the whole server (hundreds of MB): 8 to 30 ms of a stalled engine for every episode's
sandbox. This process is small, so its forks are cheap, and it runs beside the engine. It is ours
(trusted); the untrusted code runs only in the sandboxes it starts (bubblewrap, as before).

Runs as `python3 -I -B <this file> <config JSON>` (the config names the Node process that owns it, so
`ps` tells whose it is). Requests, one JSON object per line on stdin:
  {"op": "spawn", "id": n, "argv": [...], "config": {...}, "corpus": path | null, "ids": [uid, gid] | null}
      starts argv + [the config as JSON] in a new session with an empty environment in /; with a corpus,
      the file is opened here and its descriptor passed on (the config's corpusFd says which)
  {"op": "write", "id": n, "data": str}      writes to the sandbox's stdin
  {"op": "kill", "id": n}                    SIGKILL to the sandbox's process group
Events, one JSON object per line on stdout:
  {"ev": "spawned", "id": n, "pid": host pid}          (the config goes last on its command line, compact JSON)
  {"ev": "line", "id": n, "line": str}        a line of the sandbox's stdout (without its newline)
  {"ev": "overflow", "id": n}                 a line longer than the limit (the sandbox is killed)
  {"ev": "err", "id": n, "data": str}         its stderr (the first 4,000 characters)
  {"ev": "exit", "id": n, "code": int | null, "signal": int | null, "error": str | null}
      after its last line; error when it could not start
At the end of stdin (Node closed it, exited or died) every sandbox is killed and this process exits.
"""

import asyncio
import json
import os
import signal
import sys

CONFIG = json.loads(sys.argv[1]) if len(sys.argv) > 1 else {}
MAX_LINE = int(CONFIG.get("maxLineBytes", 256 * 1024))
MAX_REQUEST = 16 * 1024 * 1024
MAX_STDERR = 4000

procs = {}
out = None


def emit(obj):
    out.write((json.dumps(obj, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8", "backslashreplace"))


def killgroup(proc):
    if proc is not None and proc.returncode is None:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except OSError:
            try:
                proc.kill()
            except OSError:
                pass


async def relay_stdout(sid, proc):
    reader = proc.stdout
    while True:
        try:
            line = await reader.readuntil(b"\n")
        except asyncio.IncompleteReadError as e:
            if e.partial:
                emit({"ev": "line", "id": sid, "line": e.partial.decode("utf-8", "replace")})
            return
        except asyncio.LimitOverrunError:
            emit({"ev": "overflow", "id": sid})
            killgroup(proc)
            return
        emit({"ev": "line", "id": sid, "line": line[:-1].decode("utf-8", "replace")})


async def relay_stderr(sid, proc):
    left = MAX_STDERR
    while True:
        chunk = await proc.stderr.read(4096)
        if not chunk:
            return
        if left > 0:
            text = chunk.decode("utf-8", "replace")[:left]
            left -= len(text)
            emit({"ev": "err", "id": sid, "data": text})


async def run(req):
    sid = req["id"]
    fd = None
    config = dict(req.get("config") or {})
    try:
        if req.get("corpus"):
            fd = os.open(req["corpus"], os.O_RDONLY | os.O_CLOEXEC)
            config["corpusFd"] = fd
        ids = req.get("ids")
        proc = await asyncio.create_subprocess_exec(
            *req["argv"],
            json.dumps(config, separators=(",", ":")),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env={},
            cwd="/",
            start_new_session=True,
            pass_fds=() if fd is None else (fd,),
            limit=MAX_LINE,
            **({"user": ids[0], "group": ids[1], "extra_groups": []} if ids else {}),
        )
    except Exception as e:  # noqa: BLE001 (the reason goes back to Node)
        procs.pop(sid, None)
        emit({"ev": "exit", "id": sid, "code": None, "signal": None, "error": f"{type(e).__name__}: {e}"})
        return
    finally:
        if fd is not None:
            os.close(fd)
    if procs.get(sid) == "killed":
        killgroup(proc)
    procs[sid] = proc
    emit({"ev": "spawned", "id": sid, "pid": proc.pid})
    await asyncio.gather(relay_stdout(sid, proc), relay_stderr(sid, proc))
    code = await proc.wait()
    procs.pop(sid, None)
    emit({"ev": "exit", "id": sid, "code": code if code >= 0 else None, "signal": -code if code < 0 else None, "error": None})


async def main():
    global out
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=MAX_REQUEST)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(0, "rb", buffering=0))
    transport, protocol = await loop.connect_write_pipe(asyncio.streams.FlowControlMixin, os.fdopen(1, "wb", buffering=0))
    out = transport
    tasks = set()
    while True:
        try:
            line = await reader.readuntil(b"\n")
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError):
            break
        req = json.loads(line)
        op, sid = req.get("op"), req.get("id")
        if op == "spawn":
            procs[sid] = None
            t = asyncio.create_task(run(req))
            tasks.add(t)
            t.add_done_callback(tasks.discard)
        elif op == "write":
            proc = procs.get(sid)
            if proc is not None and proc != "killed" and proc.returncode is None:
                try:
                    proc.stdin.write(req["data"].encode("utf-8", "surrogatepass"))
                except (BrokenPipeError, ConnectionResetError):
                    pass
        elif op == "kill":
            proc = procs.get(sid)
            if proc is None and sid in procs:
                procs[sid] = "killed"  # still starting: killed as soon as it has a pid
            elif proc != "killed":
                killgroup(proc)
    for proc in list(procs.values()):
        if proc not in (None, "killed"):
            killgroup(proc)
    # Every sandbox is killed and nobody reads what is left: leave now. asyncio's own teardown would
    # collect the killed sandboxes' transports after closing its loop and print a "RuntimeError:
    # Event loop is closed" traceback for each on stderr (seen at the end of every bench:mint).
    os._exit(0)


signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
asyncio.run(main())
