"""MINT's Python sandbox driver (protocols/mint/server/sandbox.ts starts it inside bubblewrap).

Runs as `python3 -I -B -c <this file> <config JSON>`, one process per episode: a persistent shell like
the paper's IPython one. It reads one JSON request per line on its stdin and answers one JSON line per
request on its stdout; before any user code runs it moves both pipes to private descriptors (closed
on exec), points fd 0 at /dev/null and fds 1 and 2 at a capture file in the sandbox's /tmp, and sets
its resource limits. So whatever a cell prints, at the Python level or from a child process, lands in
the capture file, never in the protocol.
Every process a cell started is killed when the cell ends, before the answer (`_end_leftovers`).

Request:  {"id": n, "n": cell number, "code": str, "wall": seconds, "cpu": seconds, "replay": bool, "script": bool}
Answer:   {"id": n, "head": first 2,000 characters, "truncated": bool, "ok": bool,
           "exc": exception type name or null, "limit": null | "timeout" | "cpu" | "memory" | "output"}
"""

import ast
import io
import json
import linecache
import math
import os
import pprint
import re
import resource
import signal
import socket
import sys
import time

CONFIG = json.loads(sys.argv[1])
MAX_CHARS = 2000
MAIN_PID = os.getpid()

# --- the protocol's pipes move to private descriptors; user code sees /dev/null and the capture file
REQ = open(os.dup(0), "rb")  # noqa: SIM115 (lives as long as the process)
REPLY = os.dup(1)
_null = os.open("/dev/null", os.O_RDONLY)
os.dup2(_null, 0)
os.close(_null)
CAPTURE = os.open("/tmp/.cell-output", os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND, 0o600)
os.dup2(CAPTURE, 1)
os.dup2(CAPTURE, 2)
# Node's stdio are socket pairs: one way each, so a cell writing to the request socket fails at once.
for _fd, _how in ((REQ.fileno(), "SHUT_WR"), (REPLY, "SHUT_RD")):
    try:
        _s = socket.socket(fileno=os.dup(_fd))
        _s.shutdown(getattr(socket, _how))
        _s.close()
    except OSError:
        pass
# Descriptors the sandbox inherited by accident (Node passes on any its parent left open): closed.
_keep = {0, 1, 2, REQ.fileno(), REPLY, CAPTURE, CONFIG.get("corpusFd")}
for _fd in [int(x) for x in os.listdir("/proc/self/fd")]:
    if _fd not in _keep:
        try:
            os.close(_fd)
        except OSError:
            pass
# The corpus (if any) is read whole now and its descriptor closed, before any user code runs: a cell never
# holds a handle on the host's file (no fchmod, no reopening it through /proc/self/fd).
_corpus_text = None
if CONFIG.get("corpusFd") is not None:
    with os.fdopen(CONFIG["corpusFd"], "rb") as _f:
        _corpus_text = _f.read(CONFIG.get("corpusMaxBytes", 8 << 20) + 1)
    if len(_corpus_text) > CONFIG.get("corpusMaxBytes", 8 << 20):
        _corpus_text = b""  # Node bounds it; a larger one is not searched rather than cut mid-page
STDOUT = io.TextIOWrapper(
    io.FileIO(1, "w", closefd=False), encoding="utf-8", errors="backslashreplace", write_through=True
)


def reply(obj):
    data = (json.dumps(obj) + "\n").encode()
    while data:
        data = data[os.write(REPLY, data) :]


# --- limits, before any user code runs
def _limit(kind, value):
    if value is not None:
        resource.setrlimit(kind, (value, value))


MB = 1024 * 1024
_limit(resource.RLIMIT_AS, CONFIG["memoryMb"] * MB)
_limit(resource.RLIMIT_FSIZE, CONFIG["fileSizeMb"] * MB)
_limit(resource.RLIMIT_NPROC, CONFIG["processes"])
_limit(resource.RLIMIT_CORE, 0)
_limit(resource.RLIMIT_NOFILE, 256)
CPU_HARD = CONFIG["cpuTotalSeconds"]
resource.setrlimit(resource.RLIMIT_CPU, (CPU_HARD, CPU_HARD))
# A write past RLIMIT_FSIZE fails with EFBIG (an OSError in the cell) instead of killing the process.
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)


class CpuLimit(Exception):
    pass


_state = {"wall": 0, "cpu": 0, "limit": None}


def _on_alarm(signum, frame):
    _state["limit"] = "timeout"
    # The paper's shell raises this, with this message, when a cell passes its time limit.
    raise TimeoutError(f"Timed out after {_state['wall']} seconds.")


def _on_xcpu(signum, frame):
    _state["limit"] = "cpu"
    raise CpuLimit(f"CPU time limit exceeded ({_state['cpu']} s).")


signal.signal(signal.SIGALRM, _on_alarm)
signal.signal(signal.SIGXCPU, _on_xcpu)


# --- wikipedia_search over the offline corpus (JSONL {title, text}, read above from an inherited descriptor)
_corpus = None


def _load_corpus():
    global _corpus, _corpus_text
    if _corpus is None:
        pages = []
        for line in (_corpus_text or b"").decode("utf-8", "replace").splitlines():
            line = line.strip()
            if not line:
                continue
            try:
                page = json.loads(line)
            except ValueError:
                continue
            if isinstance(page, dict) and isinstance(page.get("title"), str):
                text = page.get("text") if isinstance(page.get("text"), str) else ""
                pages.append((page["title"], text, page["title"].lower(), text.lower()))
        _corpus = pages
        _corpus_text = None
    return _corpus


_WORD = re.compile(r"\w+")


def wikipedia_search(query: str) -> str:
    """The Wikipedia Search tool provides access to a vast collection of articles covering a wide range of topics.
    Can query specific keywords or topics to retrieve accurate and comprehensive information.
    """
    q = str(query)[:300].strip()
    ql = q.lower()
    pages = _load_corpus()
    words = [w for w in _WORD.findall(ql) if len(w) > 1]
    scored = []
    for i, (title, text, tl, xl) in enumerate(pages):
        if tl == ql:
            score = 1e9
        elif ql and ql in tl:
            score = 1e6 - len(tl)
        else:
            score = 0.0
            for w in words:
                if w in _WORD.findall(tl):
                    score += 10
                score += min(xl.count(w), 20) / 20
            if score == 0:
                continue
        scored.append((-score, i))
    scored.sort()
    summaries = []
    for _, i in scored[:2]:
        title, text = pages[i][0], pages[i][1]
        summary = text.split("\n\n", 1)[0].strip()
        summaries.append(f"Page: {title}\nSummary: {summary}")
    if not summaries:
        # The authors' wrapper answers a search without results with this very sentence.
        return "Wikipedia Search Result was found"
    return "\n\n".join(summaries)[:1000]


# --- the shell
_count = [1]  # the paper's shell runs one set-up cell first, so the first user cell is In[2]
_ns = {"__name__": "__main__", "__builtins__": __builtins__}
NO_CORPUS = (
    "wikipedia_search is not available in this run: it has no offline corpus, so there is nothing to search. "
    "Answer from what you know, or compute it."
)


def _no_corpus_search(query: str) -> str:
    """A reasoning run without a corpus: says so (rather than a NameError the model cannot read)."""
    return NO_CORPUS


if CONFIG.get("corpusFd") is not None:
    _ns["wikipedia_search"] = wikipedia_search
elif CONFIG.get("search") == "none":
    _ns["wikipedia_search"] = _no_corpus_search


def _no_recursion_limit(*args, **kwargs):
    print("Setting recursion limit is disabled")


# The paper's shell disables it (a model raising it can segfault the interpreter).
sys.setrecursionlimit = _no_recursion_limit


def _cell_name(n):
    return f"<cell-{n}>"


_CELL = re.compile(r"^<cell-(\d+)>$")


def _frame_text(filename, lineno, name):
    m = _CELL.match(filename or "")
    lines = []
    if m:
        lines.append(f"Cell In[{m.group(1)}], line {lineno}")
    else:
        lines.append(f"File {filename}:{lineno}, in {name}")
    src = linecache.getlines(filename)
    if src and lineno:
        for k in range(max(1, lineno - 2), min(len(src), lineno) + 1):
            mark = "---->" if k == lineno else "     "
            lines.append(f"{mark} {k} {src[k - 1].rstrip()}".rstrip())
    return "\n".join(lines)


def _format_exception(exc):
    """An IPython-like (NoColor) traceback of the user's frames: type, frames with context, message."""
    etype = type(exc).__name__
    if isinstance(exc, SystemExit):
        return f"An exception has occurred, use %tb to see the full traceback.\n\nSystemExit: {exc}\n"
    if isinstance(exc, SyntaxError) and exc.__traceback__ is not None and exc.filename and _CELL.match(exc.filename):
        m = _CELL.match(exc.filename)
        out = [f"  Cell In[{m.group(1)}], line {exc.lineno}"]
        if exc.text is not None:
            text = exc.text.rstrip("\n")
            stripped = text.lstrip()
            out.append("    " + stripped)
            if exc.offset:
                out.append("    " + " " * max(0, exc.offset - 1 - (len(text) - len(stripped))) + "^")
        out.append(f"{etype}: {exc.msg}")
        return "\n".join(out) + "\n"
    frames = []
    tb = exc.__traceback__
    while tb is not None:
        code = tb.tb_frame.f_code
        if code.co_filename != "<string>":  # the driver's own frames (it runs as `python3 -c`)
            frames.append(_frame_text(code.co_filename, tb.tb_lineno, code.co_name))
        tb = tb.tb_next
    msg = str(exc)
    out = ["-" * 75, f"{etype:<42}Traceback (most recent call last)"]
    for f in frames:
        out.append(f)
        out.append("")
    out.append(f"{etype}: {msg}" if msg else etype)
    return "\n".join(out) + "\n"


def _run(code, n, script):
    name = _cell_name(n)
    linecache.cache[name] = (len(code), None, code.splitlines(True), name)
    tree = ast.parse(code, filename=name, mode="exec")
    last = None
    if not script and tree.body and isinstance(tree.body[-1], ast.Expr):
        last = ast.Expression(tree.body.pop().value)
    exec(compile(tree, name, "exec"), _ns)
    if last is not None:
        value = eval(compile(last, name, "eval"), _ns)
        if value is not None:
            _ns["_"] = value
            STDOUT.write(f"Out[{n}]: {_display(value)}\n")


def _display(value):
    """Roughly IPython's display of a value: containers pretty-printed at 79 columns (one item a line
    when they do not fit, dicts in their order), anything else its repr; a value of several lines
    starts on the line after the prompt."""
    if type(value) in (list, tuple, dict, set, frozenset):
        text = pprint.pformat(value, width=79, sort_dicts=False)
    else:
        text = repr(value)
    return "\n" + text if "\n" in text else text


def _cpu_used():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def _reap():
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def _end_leftovers():
    """What a cell started ends with the cell: every process it forked (a fork bomb's included) would
    otherwise keep running, and spinning, until the episode ends. kill(-1) reaches every process of
    the sandbox's pid namespace but its pid 1 (bwrap, which reaps orphans) and the caller (this driver);
    it is sent until none is left (the dying stay visible until they are reaped), for at most a second."""
    for _ in range(200):
        try:
            os.kill(-1, signal.SIGKILL)
        except OSError:  # ESRCH: nothing left
            break
        _reap()
        time.sleep(0.005)
    _reap()


def cell(req):
    # The caller numbers the cells (the episode's position + 2), so a skipped cell keeps its number.
    _count[0] = req.get("n") or _count[0] + 1
    n = _count[0]
    os.ftruncate(CAPTURE, 0)
    os.dup2(CAPTURE, 1)
    os.dup2(CAPTURE, 2)
    sys.stdout = sys.stderr = STDOUT
    sys.stdin = open(os.devnull)  # noqa: SIM115
    _state["wall"] = req["wall"]
    _state["cpu"] = req["cpu"]
    _state["limit"] = None
    ok, exc_name = True, None
    try:
        soft = min(CPU_HARD, math.ceil(_cpu_used()) + req["cpu"])
        resource.setrlimit(resource.RLIMIT_CPU, (soft, CPU_HARD))
        signal.setitimer(signal.ITIMER_REAL, req["wall"])
        try:
            _run(req["code"], n, req.get("script", False))
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
    except BaseException as e:  # noqa: BLE001 (a cell may raise anything, SystemExit included)
        signal.setitimer(signal.ITIMER_REAL, 0)
        if os.getpid() != MAIN_PID:
            os._exit(1)
        ok, exc_name = False, type(e).__name__
        if isinstance(e, MemoryError):
            _state["limit"] = "memory"
        elif isinstance(e, OSError) and e.errno == 27:  # EFBIG: the output or a file passed RLIMIT_FSIZE
            _state["limit"] = "output"
        try:
            text = _format_exception(e)
        except BaseException:  # noqa: BLE001
            text = f"{exc_name}\n"
        try:
            STDOUT.write(text)
        except OSError:
            pass
    if os.getpid() != MAIN_PID:  # a child a cell forked came back here: it must not answer
        os._exit(0)
    _end_leftovers()
    for s in (sys.stdout, sys.stderr):
        try:
            s.flush()
        except Exception:  # noqa: BLE001
            pass
    size = os.fstat(CAPTURE).st_size
    raw = os.pread(CAPTURE, min(size, 4 * (MAX_CHARS + 1)), 0)
    text = raw.decode("utf-8", errors="replace")
    truncated = len(text) > MAX_CHARS or size > len(raw)
    return {
        "head": text[:MAX_CHARS],
        "truncated": truncated,
        "ok": ok,
        "exc": exc_name,
        "limit": _state["limit"],
    }


reply({"ready": True, "pid": os.getpid(), "uid": os.getuid()})
while True:
    line = REQ.readline()
    if not line:
        break
    req = json.loads(line)
    out = cell(req)
    out["id"] = req["id"]
    if req.get("replay"):
        out["head"] = ""
    reply(out)
