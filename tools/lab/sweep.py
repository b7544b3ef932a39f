"""sf-lab sweep SPEC.json: a grid of `sf-lab run --sim` runs (topology x
parameter values x seeds), as parallel processes on this machine or as a
Slurm job array (--slurm), gathered into one CSV and comparison plots
(docs/lab.md "Sweeps").

The spec is validated, and every grid point's topology is built and checked
(topology.load, sim.check_sim_topology), before anything runs: a bad spec or a
parameter that makes a bad topology exits 2 with the JSON path of the fault.
Then OUT/ holds:

  spec.json              the spec as read
  grid.json              every run: index, labels, values, seed, command line
  runs/NNNN/             one `sf-lab run --sim` report directory per grid point, plus
                         topology.json (the point's topology), task.json (exit code,
                         wall seconds, error), sf-lab.stdout / sf-lab.stderr
  sweep.csv              one row per run: parameters, seed, status, key results
  <plot>.png             the spec's plots
  slurm/                 --slurm: sweep.sbatch and each task's output

A run is one process (`sf-lab run --sim`, in its own session so a timeout or
Ctrl-C stops it and its sf-sim by process group). Nothing in the CSV depends
on the wall clock or on OUT's path: the same spec twice gives the same CSV.

Exit status: 0 every run succeeded, 1 some failed (their rows say why), 2 bad
spec or arguments (nothing run), 130 interrupted (the CSV has what finished).
"""
import copy
import csv
import difflib
import io
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)

import topology as tp  # noqa: E402

SPEC_KEYS = {"name", "description", "topology", "topologies", "parameters", "seeds", "timeout_s", "plots"}
PARAM_KEYS = {"path", "option", "values", "labels"}
PLOT_KEYS = {"x", "y", "series", "where", "file", "title", "logx", "logy"}
# sf-lab run's overrides a parameter may set instead of a JSON path (--seed is the spec's "seeds").
OPTIONS = {"speed_gbps": "--speed-gbps", "ts_period_us": "--ts-period-us", "run_limit_s": "--run-limit-s",
           "duration_s": "--duration"}
RESERVED = {"index", "run", "topology", "seed", "status", "exit_code", "error"}

# The key results of a run, from its results.json (column, meaning); docs/lab.md "Sweeps" lists them.
METRICS = [
    ("finished", "sf-sim finished every workload (run.sim.finished)"),
    ("virtual_s", "virtual seconds to the end of the simulation (run.traffic_s)"),
    ("events", "sf-sim events (run.sim.events)"),
    ("trace_hash", "sf-sim's trace hash (run.sim.trace_hash)"),
    ("flows", "flows (probes not counted)"),
    ("flows_complete", "flows with every byte delivered (flows[].complete)"),
    ("bytes_received", "bytes received, all flows"),
    ("completion_s", "the last flow's completion_s (empty unless every flow completed)"),
    ("completion_min_s", "the first flow's completion_s"),
    ("goodput_gbps_sum", "sum of the flows' goodput_gbps"),
    ("goodput_gbps_min", "the slowest flow's goodput_gbps"),
    ("probe_samples", "round trips of the first probe (probes[0].rtt_us.samples)"),
    ("probe_p50_us", "its round-trip p50"),
    ("probe_p99_us", "its round-trip p99"),
    ("probe_max_us", "its round-trip max"),
    ("probe_busy_p99_us", "its p99 over round trips posted while a flow toward its dst ran (during_flows)"),
    ("qdelay_p99_us", "the largest p99 queueing-delay estimate of an egress port (latency.ports)"),
    ("max_queue_bytes", "the deepest queue watermark of any linked switch port (ports[].watermark_bytes)"),
    ("ecn_marked", "ECN CE marks (totals)"),
    ("cnp_sent", "CNPs sent (totals)"),
    ("cnp_received", "CNPs received (totals)"),
    ("pfc_pause_sent", "PFC pause frames sent by switch ports (totals)"),
    ("pfc_pause_received", "PFC pause frames received by switch ports (totals)"),
    ("dropped", "frames dropped by switches (totals)"),
]
METRIC_NAMES = [m for m, _ in METRICS]
NON_NUMERIC = {"finished", "trace_hash"}


class SpecError(ValueError):
    def __init__(self, path, msg):
        super().__init__(f"{path}: {msg}" if path else msg)


# ---- the spec ---------------------------------------------------------------------------

def _keys(obj, path, allowed):
    if not isinstance(obj, dict):
        raise SpecError(path, f"want an object, got {json.dumps(obj)[:40]}")
    for k in obj:
        if k not in allowed:
            near = difflib.get_close_matches(k, sorted(allowed), n=1, cutoff=0.6)
            hint = f" (did you mean '{near[0]}'?)" if near else ""
            raise SpecError(path, f"unknown key '{k}'{hint}; known: {', '.join(sorted(allowed))}")


def _label(v):
    """A value's CSV text: scalars as they are, lists and objects as compact JSON."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float, str)):
        return v
    return json.dumps(v, separators=(",", ":"), sort_keys=True)


PATH_TOKEN = re.compile(r"\.?([A-Za-z_][A-Za-z0-9_-]*|\*)|\[(\d+|\*|[A-Za-z_][A-Za-z0-9_]*=[^\]]*)\]")


def parse_path(text, where):
    """'nodes.*.cc', 'workloads[0].size_bytes', 'nodes[kind=nic].cc', 'sim.seed' -> steps:
    ("key", k), ("index", i), ("all",), ("match", k, v)."""
    if not isinstance(text, str) or not text:
        raise SpecError(where, f"want a JSON path such as \"nodes.*.cc\" or \"workloads[0].size_bytes\", "
                        f"got {json.dumps(text)}")
    steps, pos = [], 0
    while pos < len(text):
        m = PATH_TOKEN.match(text, pos)
        if not m or (pos == 0 and text.startswith(".")) or (pos > 0 and m.group(1) and not text[pos] == "."):
            raise SpecError(where, f"'{text}': cannot read the path at '{text[pos:]}' (keys joined by '.', "
                            "'*' for every member, '[N]' an array index, '[*]' every element, '[key=value]' "
                            "the members whose key has that value)")
        if m.group(1) is not None:
            steps.append(("all",) if m.group(1) == "*" else ("key", m.group(1)))
        else:
            s = m.group(2)
            if s == "*":
                steps.append(("all",))
            elif s.isdigit():
                steps.append(("index", int(s)))
            else:
                k, v = s.split("=", 1)
                steps.append(("match", k, v))
        pos = m.end()
    return steps


def set_path(doc, steps, value, text):
    """Sets every place the path names to a copy of value; returns how many.
    Raises ValueError naming where the path stopped matching."""
    def walk(node, i, at):
        st = steps[i]
        last = i == len(steps) - 1
        if st[0] == "key":
            if not isinstance(node, dict):
                raise ValueError(f"{at or 'the topology'} is not an object (key '{st[1]}')")
            if last:
                node[st[1]] = copy.deepcopy(value)
                return 1
            if st[1] not in node:
                if steps[i + 1][0] != "key":
                    raise ValueError(f"{at + '.' if at else ''}{st[1]} does not exist")
                node[st[1]] = {}
            return walk(node[st[1]], i + 1, f"{at + '.' if at else ''}{st[1]}")
        if st[0] == "index":
            if not isinstance(node, list):
                raise ValueError(f"{at} is not an array")
            if st[1] >= len(node):
                raise ValueError(f"{at}[{st[1]}] does not exist ({at} has {len(node)} element(s))")
            if last:
                node[st[1]] = copy.deepcopy(value)
                return 1
            return walk(node[st[1]], i + 1, f"{at}[{st[1]}]")
        if isinstance(node, dict):
            items = list(node.items())
            name = lambda k: f"{at}.{k}"  # noqa: E731
        elif isinstance(node, list):
            items = list(enumerate(node))
            name = lambda k: f"{at}[{k}]"  # noqa: E731
        else:
            raise ValueError(f"{at} is neither an object nor an array")
        if st[0] == "match":
            items = [(k, v) for k, v in items if isinstance(v, dict) and st[1] in v and str(_label(v[st[1]])) == st[2]]
        if not items:
            what = "is empty" if st[0] == "all" else f"has no member whose '{st[1]}' is '{st[2]}'"
            raise ValueError(f"{at} {what}")
        n = 0
        for k, v in items:
            if last:
                node[k] = copy.deepcopy(value)
                n += 1
            else:
                n += walk(v, i + 1, name(k))
        return n
    return walk(doc, 0, "")


class Spec:
    """A validated sweep spec: topologies {label: abs path}, params [(name, {kind, target, values, labels})],
    seeds [int or None], timeout_s, plots [dict]."""

    def __init__(self, path):
        self.path = os.path.abspath(path)
        try:
            with open(self.path) as f:
                text = f.read()
        except OSError as e:
            raise SpecError("", f"cannot read the spec: {e.strerror}") from e
        try:
            raw = json.loads(text, object_pairs_hook=tp._no_dup_object_pairs)
        except json.JSONDecodeError as e:
            raise SpecError("", f"line {e.lineno}, column {e.colno}: {e.msg}") from e
        except ValueError as e:
            raise SpecError("", str(e)) from e
        self.raw = raw
        _keys(raw, "spec", SPEC_KEYS)
        self.name = raw.get("name", os.path.splitext(os.path.basename(self.path))[0])
        if not isinstance(self.name, str) or not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}", self.name):
            raise SpecError("spec.name", f"{json.dumps(self.name)}: letters, digits, '_', '.', '-' (at most 64)")
        if "description" in raw and not isinstance(raw["description"], str):
            raise SpecError("spec.description", "want a string")
        self._topologies(raw)
        self._parameters(raw)
        self._seeds(raw)
        self.timeout_s = raw.get("timeout_s")
        if self.timeout_s is not None and (isinstance(self.timeout_s, bool) or not isinstance(self.timeout_s, (int, float))
                                           or not 0 < self.timeout_s <= 86400):
            raise SpecError("spec.timeout_s", f"{json.dumps(self.timeout_s)}: wall seconds per run, in (0, 86400]")
        self._plots(raw)

    def _topologies(self, raw):
        spec_dir = os.path.dirname(self.path)
        if ("topology" in raw) == ("topologies" in raw):
            raise SpecError("spec", "name exactly one of 'topology' (a file) and 'topologies' (a list of files: a "
                            "grid axis)")
        files = [raw["topology"]] if "topology" in raw else raw["topologies"]
        where = "spec.topology" if "topology" in raw else "spec.topologies"
        if not isinstance(files, list) or not files:
            raise SpecError(where, "want a non-empty list of topology files")
        self.topologies = {}
        for i, f in enumerate(files):
            p = where if "topology" in raw else f"{where}[{i}]"
            if not isinstance(f, str):
                raise SpecError(p, f"want a file name, got {json.dumps(f)}")
            try:
                path = tp.resolve_file(f, spec_dir, p)
            except tp.TopologyError as e:
                raise SpecError("", str(e)) from e
            label = os.path.splitext(os.path.basename(path))[0]
            if label in self.topologies:
                raise SpecError(p, f"a second topology named '{label}' (the file's name labels its rows)")
            self.topologies[label] = path

    def _parameters(self, raw):
        params = raw.get("parameters", {})
        if not isinstance(params, dict):
            raise SpecError("spec.parameters", "want an object {NAME: {\"path\" or \"option\", \"values\"}}")
        self.params = []
        for name, p in params.items():
            w = f"spec.parameters.{name}"
            if not re.fullmatch(r"[A-Za-z][A-Za-z0-9_]{0,31}", name):
                raise SpecError(w, "a parameter name is a letter then letters, digits, '_' (at most 32): it "
                                "names a CSV column")
            if name in RESERVED or name in METRIC_NAMES:
                raise SpecError(w, f"'{name}' is a column of the CSV already; choose another name")
            _keys(p, w, PARAM_KEYS)
            if ("path" in p) == ("option" in p):
                raise SpecError(w, "give exactly one of 'path' (a JSON path into the topology) and 'option' "
                                f"(an sf-lab run override: {', '.join(OPTIONS)})")
            if "path" in p:
                paths = p["path"] if isinstance(p["path"], list) else [p["path"]]
                if not paths:
                    raise SpecError(f"{w}.path", "want a path or a non-empty list of paths")
                target = [(t, parse_path(t, f"{w}.path")) for t in paths]
                kind = "path"
            else:
                if p["option"] not in OPTIONS:
                    raise SpecError(f"{w}.option", f"{json.dumps(p['option'])}: one of {', '.join(OPTIONS)} "
                                    "(the seed is the spec's \"seeds\")")
                target, kind = p["option"], "option"
            values = p.get("values")
            if not isinstance(values, list) or not values:
                raise SpecError(f"{w}.values", "want a non-empty list of values")
            if kind == "option":
                for i, v in enumerate(values):
                    _check_option(target, v, f"{w}.values[{i}]")
            if "labels" in p:
                labels = p["labels"]
                if not isinstance(labels, list) or len(labels) != len(values):
                    raise SpecError(f"{w}.labels", f"want a list of {len(values)} labels, one per value")
                for i, lb in enumerate(labels):
                    if not isinstance(lb, (str, int, float)) or isinstance(lb, bool):
                        raise SpecError(f"{w}.labels[{i}]", f"want a string or a number, got {json.dumps(lb)}")
            else:
                labels = [_label(v) for v in values]
            seen = {}
            for i, lb in enumerate(labels):
                if json.dumps(lb) in seen:
                    raise SpecError(f"{w}.{'labels' if 'labels' in p else 'values'}[{i}]",
                                    f"{json.dumps(lb)} twice (also [{seen[json.dumps(lb)]}]): each value labels its rows")
                seen[json.dumps(lb)] = i
            self.params.append((name, {"kind": kind, "target": target, "values": values, "labels": labels}))
        # A topology's sim defaults under an sf-lab override that the sweep also sets: the override would win.
        options = {p["target"]: n for n, p in self.params if p["kind"] == "option"}
        for name, p in self.params:
            for text, steps in (p["target"] if p["kind"] == "path" else []):
                if len(steps) == 2 and steps[0] == ("key", "sim") and steps[1][0] == "key":
                    k = steps[1][1]
                    if k == "seed" and "seeds" in raw:
                        raise SpecError(f"spec.parameters.{name}.path", f"'{text}': the spec's \"seeds\" set the "
                                        "seed of every run (sf-lab run --seed wins over sim.seed); use one of them")
                    if k in options:
                        raise SpecError(f"spec.parameters.{name}.path", f"'{text}': parameter '{options[k]}' sets "
                                        f"{OPTIONS[k]}, which wins over {text}; use one of them")

    def _seeds(self, raw):
        if "seeds" not in raw:
            self.seeds = [None]
            return
        s = raw["seeds"]
        if not isinstance(s, list) or not s:
            raise SpecError("spec.seeds", "want a non-empty list of seeds")
        for i, v in enumerate(s):
            if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v < 2**63:
                raise SpecError(f"spec.seeds[{i}]", f"{json.dumps(v)}: a seed is an integer >= 0")
            if v in s[:i]:
                raise SpecError(f"spec.seeds[{i}]", f"seed {v} twice")
        self.seeds = s

    def labels_of(self, col):
        """The labels a grid column takes (a parameter, "topology" or "seed")."""
        if col == "topology":
            return list(self.topologies)
        if col == "seed":
            return self.seeds
        return dict(self.params)[col]["labels"]

    def _plots(self, raw):
        plots = raw.get("plots", [])
        if not isinstance(plots, list):
            raise SpecError("spec.plots", "want a list of plots")
        self.plots = []
        params = [n for n, _ in self.params]
        axes = ["topology"] + params + ["seed"]
        numeric = [m for m in METRIC_NAMES if m not in NON_NUMERIC]
        files = {}
        for i, p in enumerate(plots):
            w = f"spec.plots[{i}]"
            _keys(p, w, PLOT_KEYS)
            for k in ("x", "y"):
                if k not in p:
                    raise SpecError(w, f"missing '{k}'")
            if p["x"] not in axes + numeric:
                raise SpecError(f"{w}.x", f"{json.dumps(p['x'])}: one of the grid's columns ({', '.join(axes)}) or a "
                                f"numeric result ({', '.join(numeric)})")
            if p["y"] not in numeric:
                near = difflib.get_close_matches(str(p["y"]), numeric, n=1, cutoff=0.6)
                hint = f" (did you mean '{near[0]}'?)" if near else ""
                raise SpecError(f"{w}.y", f"{json.dumps(p['y'])}{hint}: one of the numeric results "
                                f"({', '.join(numeric)})")
            series = p.get("series")
            if series is not None and (series not in axes or series == p["x"]):
                raise SpecError(f"{w}.series", f"{json.dumps(series)}: one of the grid's columns other than x "
                                f"({', '.join(a for a in axes if a != p['x'])})")
            where = p.get("where", {})
            _keys(where, f"{w}.where", set(a for a in axes if a not in (p["x"], series)))
            for k, v in where.items():
                if v not in self.labels_of(k):
                    raise SpecError(f"{w}.where.{k}", f"{json.dumps(v)} is not one of its values "
                                    f"({', '.join(json.dumps(x) for x in self.labels_of(k))})")
            for a in axes:
                if a not in (p["x"], series, "seed") and a not in where and len(self.labels_of(a)) > 1:
                    raise SpecError(w, f"'{a}' takes {len(self.labels_of(a))} values and is neither x nor series: "
                                    f"pin it with \"where\": {{\"{a}\": ...}} (seeds are averaged, nothing else is)")
            name = p.get("file", f"{p['y']}-vs-{p['x']}" + (f"-by-{series}" if series else "") + ".png")
            if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]*\.png", name):
                raise SpecError(f"{w}.file", f"{json.dumps(name)}: a file name ending in .png (no directory)")
            if name in files:
                raise SpecError(f"{w}.file", f"'{name}' is also plots[{files[name]}]'s file")
            files[name] = i
            if "title" in p and not isinstance(p["title"], str):
                raise SpecError(f"{w}.title", "want a string")
            for k in ("logx", "logy"):
                if k in p and not isinstance(p[k], bool):
                    raise SpecError(f"{w}.{k}", "want true or false")
            self.plots.append({"x": p["x"], "y": p["y"], "series": series, "where": where, "file": name,
                               "title": p.get("title"), "logx": p.get("logx", False), "logy": p.get("logy", False)})


def _check_option(opt, v, where):
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise SpecError(where, f"{json.dumps(v)}: want a number")
    if opt == "speed_gbps" and (not isinstance(v, int) or not tp.MIN_SPEED_GBPS <= v <= tp.MAX_SPEED_GBPS):
        raise SpecError(where, f"{v}: a whole number of Gb/s in [{tp.MIN_SPEED_GBPS}, {tp.MAX_SPEED_GBPS}]")
    if opt == "ts_period_us" and (not isinstance(v, int) or v <= 0):
        raise SpecError(where, f"{v}: a whole number of virtual us > 0")
    if opt in ("run_limit_s", "duration_s") and not v > 0:
        raise SpecError(where, f"{v}: seconds > 0")


# ---- the grid ---------------------------------------------------------------------------

def expand(spec):
    """Every grid point in order: topology outermost, then the parameters in the spec's order, seeds innermost.
    Each: {"index", "topology", "labels": {param: label}, "values": {param: value}, "seed"}."""
    points = [{"topology": t, "labels": {}, "values": {}} for t in spec.topologies]
    for name, p in spec.params:
        points = [{**pt, "labels": {**pt["labels"], name: lb}, "values": {**pt["values"], name: v}}
                  for pt in points for v, lb in zip(p["values"], p["labels"])]
    out = []
    for pt in points:
        for s in spec.seeds:
            out.append({**pt, "seed": s, "index": len(out)})
    return out


def point_topology(spec, pt):
    """The point's topology JSON: its file with every path parameter set and switch configs made absolute
    (the copy lives in OUT/runs/NNNN/, not beside the original). Raises SpecError."""
    path = spec.topologies[pt["topology"]]
    try:
        doc = tp._read_json(path, "")
    except tp.TopologyError as e:
        raise SpecError("", f"{path}: {e}") from e
    if not isinstance(doc, dict):
        raise SpecError("", f"{path}: a topology is a JSON object")
    for name, p in spec.params:
        if p["kind"] != "path":
            continue
        for text, steps in p["target"]:
            try:
                set_path(doc, steps, pt["values"][name], text)
            except ValueError as e:
                raise SpecError(f"spec.parameters.{name}.path", f"'{text}' in {pt['topology']}: {e}") from e
    nodes = doc.get("nodes")
    if isinstance(nodes, dict):
        for n, obj in nodes.items():
            if isinstance(obj, dict) and isinstance(obj.get("config"), str):
                try:
                    obj["config"] = tp.resolve_file(obj["config"], os.path.dirname(path), f"nodes.{n}.config")
                except tp.TopologyError:
                    pass  # topology.load names it
    return doc


def describe_point(pt):
    parts = [f"topology={pt['topology']}"] + [f"{k}={v}" for k, v in pt["labels"].items()]
    if pt["seed"] is not None:
        parts.append(f"seed={pt['seed']}")
    return " ".join(parts)


def plan_grid(spec, out, build):
    """Validates every point (its topology loads and runs in virtual time) and returns the grid entries with
    their sf-lab command lines and topology documents. Writes nothing under out. Raises SpecError."""
    import sim
    grid = []
    with tempfile.TemporaryDirectory(prefix="sf-sweep-") as tmp:
        for pt in expand(spec):
            doc = point_topology(spec, pt)
            check = os.path.join(tmp, f"{pt['topology']}.json")
            with open(check, "w") as f:
                json.dump(doc, f)
            try:
                t = tp.load(check)
                sim.check_sim_topology(t)
            except (tp.TopologyError, sim.SimError) as e:
                wild = [f"{n} ('{text}')" for n, p in spec.params if p["kind"] == "path"
                        for text, steps in p["target"] if ("all",) in steps]
                hint = f" (a '*' sets every member: {', '.join(wild)}; '[key=value]' selects, e.g. " \
                    "nodes[kind=nic].cc)" if wild else ""
                raise SpecError("", f"run {pt['index']} ({describe_point(pt)}): topology {e}{hint}") from e
            rel = os.path.join("runs", f"{pt['index']:04d}")
            cmd = [os.path.join(tp.ROOT, "tools", "sf-lab"), "run", "--sim",
                   os.path.join(out, rel, "topology.json"), "--out", os.path.join(out, rel), "--build", build]
            if pt["seed"] is not None:
                cmd += ["--seed", str(pt["seed"])]
            for name, p in spec.params:
                if p["kind"] == "option":
                    cmd += [OPTIONS[p["target"]], str(pt["values"][name])]
            # The seed the run uses: the spec's, else the point's topology sim.seed (default 1), as sf-lab run.
            grid.append({**pt, "dir": rel, "cmd": [sys.executable] + cmd, "switches": len(t.switches),
                         "run_seed": pt["seed"] if pt["seed"] is not None else t.sim["seed"], "_doc": doc})
    return grid


def write_plan(spec, out, grid):
    """OUT/spec.json, grid.json and each run's topology.json (a previous sweep's runs/ is removed)."""
    if os.path.isdir(os.path.join(out, "runs")):
        shutil.rmtree(os.path.join(out, "runs"))
    os.makedirs(os.path.join(out, "runs"), exist_ok=True)
    with open(os.path.join(out, "spec.json"), "w") as f:
        json.dump(spec.raw, f, indent=2)
    for g in grid:
        d = os.path.join(out, g["dir"])
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "topology.json"), "w") as f:
            json.dump(g["_doc"], f, indent=2)
    with open(os.path.join(out, "grid.json"), "w") as f:
        json.dump({"name": spec.name, "timeout_s": spec.timeout_s,
                   "runs": [{k: v for k, v in g.items() if k != "_doc"} for g in grid]}, f, indent=2)


# ---- one run ----------------------------------------------------------------------------

def start_run(out, g):
    d = os.path.join(out, g["dir"])
    fo = open(os.path.join(d, "sf-lab.stdout"), "w")
    fe = open(os.path.join(d, "sf-lab.stderr"), "w")
    p = subprocess.Popen(g["cmd"], stdout=fo, stderr=fe, stdin=subprocess.DEVNULL, start_new_session=True)
    fo.close()
    fe.close()
    return p


def stop_group(p):
    """SIGTERM, then SIGKILL, to the run's process group (sf-lab and its sf-sim), by the leader's PID."""
    for sig, wait_s in ((signal.SIGTERM, 5), (signal.SIGKILL, 5)):
        try:
            os.killpg(p.pid, sig)
        except ProcessLookupError:
            return
        try:
            p.wait(timeout=wait_s)
            return
        except subprocess.TimeoutExpired:
            continue


def finish_run(out, g, rc, wall_s, timed_out=False, interrupted=False):
    """Writes runs/NNNN/task.json: {"exit_code", "wall_s", "timed_out", "interrupted", "error"}."""
    d = os.path.join(out, g["dir"])
    err = None
    if timed_out:
        err = "timed out after %g s (spec timeout_s)" % wall_s
    elif interrupted:
        err = "stopped while it ran (the sweep was interrupted)"
    elif rc != 0:
        try:
            with open(os.path.join(d, "sf-lab.stderr")) as f:
                lines = [ln.strip() for ln in f.read().splitlines() if ln.strip()]
        except OSError:
            lines = []
        mine = [ln for ln in lines if ln.startswith("sf-lab:")]
        err = (mine or lines or [f"sf-lab exited {rc}"])[-1]
        err = err.replace(os.path.join(out, ""), "")
    rec = {"exit_code": rc, "wall_s": round(wall_s, 3), "timed_out": timed_out, "interrupted": interrupted,
           "error": err}
    with open(os.path.join(d, "task.json"), "w") as f:
        json.dump(rec, f)
    return rec


def run_one(out, index):
    """One grid point, synchronously (a Slurm array task): exit code of the run."""
    with open(os.path.join(out, "grid.json")) as f:
        grid = json.load(f)
    g = grid["runs"][index]
    t0 = time.monotonic()

    def on_signal(signum, _frame):  # scancel, a node going down: stop the run (its own session) too
        raise KeyboardInterrupt()
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    p = start_run(out, g)
    try:
        rc = p.wait(timeout=grid.get("timeout_s"))
        finish_run(out, g, rc, time.monotonic() - t0)
        return rc
    except subprocess.TimeoutExpired:
        stop_group(p)
        finish_run(out, g, None, time.monotonic() - t0, timed_out=True)
        return 1
    except KeyboardInterrupt:
        stop_group(p)
        finish_run(out, g, None, time.monotonic() - t0, interrupted=True)
        return 130


# ---- results ----------------------------------------------------------------------------

def metrics(res):
    """The key results of one results.json (METRICS)."""
    run = res.get("run", {})
    sm = run.get("sim") or {}
    flows = res.get("flows", [])
    comp = [f["completion_s"] for f in flows if f.get("completion_s") is not None]
    gp = [f["goodput_gbps"] for f in flows if f.get("goodput_gbps") is not None]
    complete = sum(1 for f in flows if f.get("complete"))
    m = {"finished": sm.get("finished"), "virtual_s": run.get("traffic_s"), "events": sm.get("events"),
         "trace_hash": sm.get("trace_hash"), "flows": len(flows), "flows_complete": complete,
         "bytes_received": sum(f.get("bytes_received") or 0 for f in flows),
         "completion_s": max(comp) if flows and complete == len(flows) and len(comp) == len(flows) else None,
         "completion_min_s": min(comp) if comp else None,
         "goodput_gbps_sum": sum(gp) if gp else None, "goodput_gbps_min": min(gp) if gp else None}
    probes = res.get("probes") or []
    rtt = (probes[0].get("rtt_us") or {}) if probes else {}
    busy = (probes[0].get("during_flows") or {}) if probes else {}
    m.update({"probe_samples": rtt.get("samples"), "probe_p50_us": rtt.get("p50"), "probe_p99_us": rtt.get("p99"),
              "probe_max_us": rtt.get("max"), "probe_busy_p99_us": busy.get("p99")})
    ports = (res.get("latency") or {}).get("ports") or {}
    m["qdelay_p99_us"] = max((v.get("p99_us") for v in ports.values() if v.get("p99_us") is not None), default=None)
    m["max_queue_bytes"] = max((p.get("watermark_bytes", 0) for p in res.get("ports", [])), default=None)
    tot = res.get("totals") or {}
    for k in ("ecn_marked", "cnp_sent", "cnp_received", "pfc_pause_sent", "pfc_pause_received", "dropped"):
        m[k] = tot.get(k)
    return m


def collect(out, grid, missing_reason=None):
    """One row per run, from its task.json and results.json. missing_reason(g) explains a run without a
    task.json (never started, interrupted, a Slurm task that did not run)."""
    rows = []
    for g in grid:
        d = os.path.join(out, g["dir"])
        row = {"index": g["index"], "run": g["dir"], "topology": g["topology"], **g["labels"],
               "seed": g["run_seed"], "status": "", "exit_code": None, "error": None}
        task = _read_json(os.path.join(d, "task.json"))
        res = _read_json(os.path.join(d, "results.json"))
        if res is not None:
            row.update(metrics(res))
        if task is None:
            row["status"] = "not run"
            row["error"] = missing_reason(g) if missing_reason else "not run"
        else:
            row["exit_code"] = task["exit_code"]
            row["error"] = task["error"]
            row["status"] = task_status(task)
        rows.append(row)
    return rows


def task_status(task):
    if task.get("timed_out"):
        return "timeout"
    if task.get("interrupted"):
        return "interrupted"
    return "ok" if task["exit_code"] == 0 else "failed"


def _read_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def columns(spec):
    return ["index", "run", "topology"] + [n for n, _ in spec.params] + ["seed", "status", "exit_code", "error"] \
        + METRIC_NAMES


def _cell(v):
    if v is None:
        return ""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return "%.9g" % v
    return v


def write_csv(spec, rows, path):
    cols = columns(spec)
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(cols)
    for r in rows:
        w.writerow([_cell(r.get(c)) for c in cols])
    with open(path, "w") as f:
        f.write(buf.getvalue())


def make_plots(spec, rows, out):
    """The spec's plots from the rows that succeeded: y against x, one line per series value, the mean over
    seeds with min..max bars. Returns the files written."""
    if not spec.plots:
        return []
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    made = []
    for p in spec.plots:
        sel = [r for r in rows if r["status"] == "ok" and r.get(p["y"]) is not None and r.get(p["x"]) is not None
               and all(r.get(k) == v for k, v in p["where"].items())]
        series = spec.labels_of(p["series"]) if p["series"] else [None]
        xs_all = [r[p["x"]] for r in sel]
        numeric_x = all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in xs_all)
        if numeric_x:
            order = sorted(set(xs_all))
        else:
            order = []
            for x in (spec.labels_of(p["x"]) if p["x"] in ["topology", "seed"] + [n for n, _ in spec.params]
                      else xs_all):
                if x not in order:
                    order.append(x)
        fig, ax = plt.subplots(figsize=(7, 4.5))
        for s in series:
            pts = []
            for x in order:
                ys = [r[p["y"]] for r in sel if r[p["x"]] == x and (s is None or r.get(p["series"]) == s)]
                if ys:
                    pts.append((x, sum(ys) / len(ys), min(ys), max(ys)))
            if not pts:
                continue
            xpos = [pt[0] if numeric_x else order.index(pt[0]) for pt in pts]
            mean = [pt[1] for pt in pts]
            err = [[pt[1] - pt[2] for pt in pts], [pt[3] - pt[1] for pt in pts]]
            label = None if s is None else f"{p['series']}={s}"
            ax.errorbar(xpos, mean, yerr=err if any(e for e in err[0] + err[1]) else None, marker="o", capsize=3,
                        label=label)
        if not numeric_x:
            ax.set_xticks(range(len(order)))
            ax.set_xticklabels([str(x) for x in order])
        if p["logx"] and numeric_x:
            ax.set_xscale("log")
        if p["logy"]:
            ax.set_yscale("log")
        ax.set_xlabel(p["x"])
        ax.set_ylabel(p["y"])
        notes = [f"{k}={v}" for k, v in p["where"].items()]
        if len(spec.seeds) > 1 and "seed" not in (p["x"], p["series"]):
            notes.append(f"mean of {len(spec.seeds)} seeds, bars min..max")
        ax.set_title(p["title"] or f"{spec.name}: {p['y']} vs {p['x']}" + (f" ({', '.join(notes)})" if notes else ""),
                     fontsize=10)
        if p["series"]:
            ax.legend(fontsize=8)
        ax.grid(True, alpha=0.3)
        if not sel:
            ax.text(0.5, 0.5, "no successful run", transform=ax.transAxes, ha="center")
        fig.tight_layout()
        fig.savefig(os.path.join(out, p["file"]), dpi=100)
        plt.close(fig)
        made.append(p["file"])
    return made


# ---- progress -----------------------------------------------------------------------------

class Progress:
    """A bar redrawn in place on a terminal; one line per finished run otherwise."""

    def __init__(self, total, stream=sys.stdout):
        self.total, self.done, self.failed, self.stream = total, 0, 0, stream
        self.tty = stream.isatty()
        self.last = None
        self.t0 = time.monotonic()

    def bar(self, running, note=""):
        if not self.tty:
            return
        width = 30
        fill = width * self.done // max(self.total, 1)
        text = f"[{'#' * fill}{'.' * (width - fill)}] {self.done}/{self.total} runs, {self.failed} failed, " \
            f"{running} running, {time.monotonic() - self.t0:.0f} s{note}"
        if text != self.last:  # redrawn when it changes (about once a second)
            self.stream.write("\r\033[K" + text)
            self.stream.flush()
            self.last = text

    def finished(self, g, status, wall_s, error=None, running=0):
        self.done += 1
        self.failed += status != "ok"
        line = f"[{self.done}/{self.total}] {g['dir']} {describe_point(g)}: {status}" + \
            (f" ({wall_s:.1f} s)" if wall_s is not None else "") + (f": {error}" if error and status != "ok" else "")
        if self.tty:
            if status != "ok":
                self.stream.write("\r\033[K" + line + "\n")
                self.last = None
            self.bar(running)
        else:
            self.stream.write(line + "\n")
            self.stream.flush()

    def end(self):
        if self.tty:
            self.stream.write("\n")
            self.stream.flush()


# ---- local and Slurm execution ------------------------------------------------------------

def default_jobs(grid):
    """Cores, or fewer when memory would not hold them: sf-sim takes ~1 GiB for two switches plus 256 MiB per
    further switch (docs/sf-sim.md); with the Python around it, 1.5 GiB + that."""
    per = (1536 + 256 * max(0, max(g["switches"] for g in grid) - 2)) << 20
    return max(1, min(os.cpu_count() or 1, tp.mem_available_bytes() // per, len(grid)))


def run_local(out, grid, jobs, timeout_s, progress):
    """Runs the grid, at most jobs at a time. Returns True when interrupted."""
    pending = list(grid)
    running = {}  # Popen -> (g, t0)
    try:
        while pending or running:
            while pending and len(running) < jobs:
                g = pending.pop(0)
                running[start_run(out, g)] = (g, time.monotonic())
            progress.bar(len(running))
            time.sleep(0.1)
            for p in list(running):
                g, t0 = running[p]
                rc = p.poll()
                wall = time.monotonic() - t0
                if rc is None and timeout_s is not None and wall > timeout_s:
                    stop_group(p)
                    del running[p]
                    rec = finish_run(out, g, None, wall, timed_out=True)
                    progress.finished(g, "timeout", wall, rec["error"], len(running))
                elif rc is not None:
                    del running[p]
                    rec = finish_run(out, g, rc, wall)
                    progress.finished(g, "ok" if rc == 0 else "failed", wall, rec["error"], len(running))
    except KeyboardInterrupt:
        for p, (g, t0) in running.items():
            stop_group(p)
            finish_run(out, g, None, time.monotonic() - t0, interrupted=True)
        return True
    return False


def slurm_script(out, grid, name, jobs):
    """The batch script of the job array: task i runs grid point i (this file's `task` entry)."""
    array = f"0-{len(grid) - 1}" + (f"%{jobs}" if jobs else "")
    return "\n".join([
        "#!/bin/bash",
        f"#SBATCH --job-name=sf-sweep-{name}",
        f"#SBATCH --array={array}",
        f"#SBATCH --output={os.path.join(out, 'slurm', '%A_%a.out')}",
        "#SBATCH --ntasks=1",
        "#SBATCH --cpus-per-task=1",
        f"#SBATCH --chdir={out}",
        "# One grid point per array task (grid.json); it writes runs/NNNN/ (sf-lab docs/lab.md \"Sweeps\").",
        f"exec {shlex.quote(sys.executable)} {shlex.quote(os.path.abspath(__file__))} task {shlex.quote(out)} "
        "\"$SLURM_ARRAY_TASK_ID\"",
        ""])


def _slurm(cmd, check=True):
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    if check and r.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}: exit {r.returncode}: {(r.stderr or r.stdout).strip()}")
    return r


def slurm_states(job):
    """{array index: (state, exit code text)} of a finished array from scontrol (jobs are kept MinJobAge
    seconds after they end), else sacct (accounting), else {}."""
    out = {}
    r = _slurm(["scontrol", "-o", "show", "job", job], check=False)
    if r.returncode == 0:
        for line in r.stdout.splitlines():
            f = dict(kv.split("=", 1) for kv in line.split() if "=" in kv)
            if f.get("ArrayTaskId", "").isdigit():
                out[int(f["ArrayTaskId"])] = (f.get("JobState", "?"), f.get("ExitCode", "?"))
    if out:
        return out
    r = _slurm(["sacct", "-n", "-P", "-X", "-j", job, "-o", "JobID,State,ExitCode"], check=False)
    if r.returncode == 0:
        for line in r.stdout.splitlines():
            parts = line.split("|")
            if len(parts) == 3 and "_" in parts[0] and parts[0].rsplit("_", 1)[1].isdigit():
                out[int(parts[0].rsplit("_", 1)[1])] = (parts[1], parts[2])
    return out


def run_slurm(out, grid, spec, jobs, sbatch_args, poll_s, progress):
    """Writes and submits the array, waits for it (squeue), then returns (interrupted, job, states)."""
    os.makedirs(os.path.join(out, "slurm"), exist_ok=True)
    script = os.path.join(out, "slurm", "sweep.sbatch")
    with open(script, "w") as f:
        f.write(slurm_script(out, grid, spec.name, jobs))
    r = _slurm(["sbatch", "--parsable"] + list(sbatch_args) + [script])
    job = r.stdout.strip().split(";")[0]
    if not job.isdigit():
        raise RuntimeError(f"sbatch printed {r.stdout.strip()!r}, not a job id")
    print(f"slurm: submitted job array {job} ({len(grid)} tasks): {script}", flush=True)
    seen = set()
    errors = 0
    try:
        while True:
            q = _slurm(["squeue", "-h", "-r", "-j", job, "-o", "%i %T"], check=False)  # -r: a line per task
            if q.returncode != 0 and "invalid job id" not in q.stderr.lower():
                # The controller busy or restarting: ask again, up to a minute or 12 polls.
                errors += 1
                if errors * poll_s > 60 and errors > 12:
                    raise RuntimeError(f"squeue -j {job}: exit {q.returncode}: {q.stderr.strip()} (job left running)")
                time.sleep(poll_s)
                continue
            errors = 0
            # squeue forgets a finished job (exit 1 "Invalid job id") once it is purged: also done.
            active = [ln for ln in q.stdout.splitlines() if ln.strip()] if q.returncode == 0 else []
            for g in grid:
                if g["index"] not in seen:
                    task = _read_json(os.path.join(out, g["dir"], "task.json"))
                    if task is not None:
                        seen.add(g["index"])
                        progress.finished(g, task_status(task), task.get("wall_s"), task.get("error"),
                                          sum(1 for ln in active if ln.endswith("RUNNING")))
            if not active:
                break
            states = {}
            for ln in active:
                states[ln.split()[-1].lower()] = states.get(ln.split()[-1].lower(), 0) + 1
            progress.bar(states.get("running", 0),
                         " (slurm: " + ", ".join(f"{n} {st}" for st, n in sorted(states.items())) + ")")
            time.sleep(poll_s)
    except KeyboardInterrupt:
        _slurm(["scancel", job], check=False)
        return True, job, {}
    return False, job, slurm_states(job)


# ---- the command --------------------------------------------------------------------------

def add_arguments(ap):
    ap.add_argument("spec", help="sweep spec JSON (docs/lab.md \"Sweeps\")")
    ap.add_argument("--out", metavar="DIR", help="sweep directory (default ./out/sweep-<name>)")
    ap.add_argument("--build", default=os.path.join(tp.ROOT, "build"), metavar="DIR",
                    help="meson build directory with tools/sf-sim/sf-sim (default: the repository's build/)")
    ap.add_argument("-j", "--jobs", type=int, metavar="N", help="runs at once (default: the cores, fewer when memory "
                    "would not hold them); with --slurm the array's limit of tasks at once (default: none)")
    ap.add_argument("--dry-run", action="store_true", help="validate the spec and every grid point, print the grid, "
                    "run nothing")
    ap.add_argument("--slurm", action="store_true", help="submit the grid as a Slurm job array (sbatch), wait for it "
                    "(squeue) and collect its results; DIR must be on a file system the nodes share")
    ap.add_argument("--sbatch-arg", action="append", default=[], metavar="ARG",
                    help="--slurm: an extra sbatch option (e.g. --sbatch-arg=--partition=sim); repeatable")
    ap.add_argument("--poll-s", type=float, default=5.0, metavar="S", help="--slurm: squeue poll period (default 5)")


def main(a):
    """sf-lab sweep (parsed arguments): exit status as the module says."""
    try:
        spec = Spec(a.spec)
    except SpecError as e:
        print(f"sf-lab: {a.spec}: {e}", file=sys.stderr)
        return 2
    if a.jobs is not None and a.jobs < 1:
        print(f"sf-lab: -j {a.jobs}: want at least 1", file=sys.stderr)
        return 2
    if a.poll_s <= 0:
        print(f"sf-lab: --poll-s {a.poll_s:g}: want > 0", file=sys.stderr)
        return 2
    if a.sbatch_arg and not a.slurm:
        print("sf-lab: --sbatch-arg applies to --slurm only", file=sys.stderr)
        return 2
    out = os.path.abspath(a.out or os.path.join("out", f"sweep-{spec.name}"))
    build = os.path.abspath(a.build)
    try:
        grid = plan_grid(spec, out, build)
    except SpecError as e:
        print(f"sf-lab: {a.spec}: {e}", file=sys.stderr)
        return 2
    print(f"sweep {spec.name}: {len(grid)} run(s) = {len(spec.topologies)} topolog{'y' if len(spec.topologies) == 1 else 'ies'}"
          + "".join(f" x {len(p['values'])} {n}" for n, p in spec.params) + f" x {len(spec.seeds)} seed(s)", flush=True)
    if a.dry_run:
        for g in grid:
            print(f"  {g['dir']} {describe_point(g)}")
        if a.slurm:
            print(f"the batch script (OUT/slurm/sweep.sbatch):\n{slurm_script(out, grid, spec.name, a.jobs)}", end="")
        return 0
    sim_bin = os.path.join(build, "tools", "sf-sim", "sf-sim")
    if not os.access(sim_bin, os.X_OK):
        print(f"sf-lab: {sim_bin} not found: build first (ninja -C {build} tools/sf-sim/sf-sim)", file=sys.stderr)
        return 2
    if os.path.exists(out) and not os.path.isdir(out):
        print(f"sf-lab: {out}: exists and is not a directory; choose another --out", file=sys.stderr)
        return 2
    if os.path.exists(out) and os.listdir(out) and not os.path.exists(os.path.join(out, "grid.json")):
        print(f"sf-lab: {out}: exists and is not a sweep directory (no grid.json); choose another --out",
              file=sys.stderr)
        return 2
    if a.slurm and re.search(r"\s", out):
        print(f"sf-lab: --slurm: {out!r}: a directory without white space, please (#SBATCH lines name it)",
              file=sys.stderr)
        return 2
    if a.slurm:
        missing = [c for c in ("sbatch", "squeue", "scontrol") if shutil.which(c) is None]
        if missing:
            print(f"sf-lab: --slurm: {', '.join(missing)} not found (Debian: slurm-client)", file=sys.stderr)
            return 2
    def on_signal(signum, _frame):
        raise KeyboardInterrupt()
    signal.signal(signal.SIGINT, on_signal)   # Ctrl-C (also when started with SIGINT ignored, as `cmd &` does)
    signal.signal(signal.SIGTERM, on_signal)  # the runs are stopped by process group, what finished is written
    write_plan(spec, out, grid)
    print(f"  sweep    {out}", flush=True)
    progress = Progress(len(grid))
    states, job = {}, None
    if a.slurm:
        try:
            interrupted, job, states = run_slurm(out, grid, spec, a.jobs, a.sbatch_arg, a.poll_s, progress)
        except (RuntimeError, subprocess.TimeoutExpired) as e:
            progress.end()
            print(f"sf-lab: --slurm: {e}", file=sys.stderr)
            return 2
    else:
        jobs = a.jobs or default_jobs(grid)
        print(f"  parallel {jobs} run(s) at once", flush=True)
        interrupted = run_local(out, grid, jobs, spec.timeout_s, progress)
    progress.end()

    def missing(g):
        if interrupted:
            return "interrupted before it finished"
        if job is not None:
            st = states.get(g["index"])
            what = f"Slurm task {job}_{g['index']} {st[0]} (exit {st[1]})" if st else \
                f"Slurm task {job}_{g['index']} left no result"
            return f"{what}; see slurm/{job}_{g['index']}.out"
        return "not run"
    rows = collect(out, grid, missing)
    csv_path = os.path.join(out, "sweep.csv")
    write_csv(spec, rows, csv_path)
    try:
        made = make_plots(spec, rows, out)
    except ImportError as e:
        print(f"sf-lab: no plots: {e} (python3-matplotlib)", file=sys.stderr)
        made = []
    bad = [r for r in rows if r["status"] != "ok"]
    for r in bad:
        print(f"  {r['run']} {r['status']}: {r['error']}", file=sys.stderr)
    print(f"sweep: {len(rows) - len(bad)} of {len(rows)} run(s) ok; {csv_path}"
          + (f"; plots {', '.join(made)}" if made else ""), flush=True)
    if interrupted:
        return 130
    return 1 if bad else 0


if __name__ == "__main__":
    # A Slurm array task: sweep.py task OUT INDEX (the batch script's one command).
    if len(sys.argv) == 4 and sys.argv[1] == "task" and sys.argv[3].isdigit():
        sys.exit(run_one(os.path.abspath(sys.argv[2]), int(sys.argv[3])))
    print("usage: sf-lab sweep SPEC.json [options] (this file's own entry is for Slurm tasks: task OUT INDEX)",
          file=sys.stderr)
    sys.exit(2)
