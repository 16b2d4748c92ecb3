"""A kernel pair's answer as a page generated from data kept in the repository.

docs/data/<page>.json holds every figure the answer rests on: each side's samples, with
their clock, settings and host, from the sweep's one boot each (build sizes included) and
from the boots of `boardlab compare` that decided the families one boot left unknown.
`boardlab gen` writes docs/<page>.md from it through the judge (seeded: the same data
gives the same page, byte for byte, on any host); `boardlab gen --check` says whether the
committed page matches its data. `boardlab kernel answer` writes the data from a sweep's
pair (kernel.neighbours), keeping the hand-written notes of the data it replaces."""
from __future__ import annotations

import json
from pathlib import Path

from boardlab.errors import InputError
from boardlab.facts.board import PROJECT_ROOT, load_board
from boardlab.files import atomic_write
from boardlab.judge.decide import EXACT_SHOWN
from boardlab.judge.results import load_run
from boardlab.measure import kernelid

DATA_DIR = PROJECT_ROOT / "docs" / "data"
PAGES_DIR = PROJECT_ROOT / "docs"
FORMAT = 1


def side_data(run: Path, kernel: str) -> dict:
    """One kernel's figures of a run (its results.json): per metric the samples, clock,
    settings; the run's host and the kernel's identity."""
    data = load_run(run, judged=True)
    metrics = [m for m in data["metrics"] if m["kernel"] == kernel and m["value"] is not None]
    if not metrics:
        raise InputError(f"{Path(run) / 'results.json'}: no figures of kernel {kernel}")
    boards = {m["board"] for m in metrics}
    return {"label": kernel, "board": boards.pop() if len(boards) == 1 else None,
            "host": data["meta"].get("host"),
            "identity": data["meta"].get("kernels", {}).get(f"{metrics[0]['board']}/{kernel}") or {},
            "metrics": {f"{m['suite']}.{m['name']}": {"samples": m.get("samples") or [m["value"]],
                                                      "clock": m.get("clock"), "settings": m.get("settings")}
                        for m in sorted(metrics, key=lambda m: (m["suite"], m["name"]))}}


def pair_data(sweep_dir: Path, a: str | None = None, b: str | None = None, budget: int | None = None) -> dict:
    """The data of one pair of a sweep (default: its two ends) from <sweep_dir>/sweep.json;
    budget: the sweep's, where its sweep.json does not keep it."""
    from boardlab.kernel import neighbours
    state_path = Path(sweep_dir) / "sweep.json"
    if not state_path.exists():
        raise InputError(f"{state_path}: no sweep here (run `boardlab kernel sweep --out {sweep_dir}`)")
    state = json.loads(state_path.read_text())
    runs = {k["name"]: k["run_dir"] for k in state.get("kernels", []) if k.get("status") == "measured"}
    pairs = neighbours.load(state_path)
    if a is None or b is None:
        ends = [p for p in pairs.values() if p.dir]
        if not ends:
            raise InputError(f"{state_path}: no pair was booted in turn (a sweep with --budget 0?)")
        pair = ends[-1]   # decide_all appends the two ends last
    else:
        pair = pairs.get((a, b))
        if pair is None:
            raise InputError(f"{state_path}: no pair {a}..{b} (pairs: {', '.join(f'{x}..{y}' for x, y in pairs)})")
    if pair.status not in ("decided", "unknown at the budget"):
        raise InputError(f"{state_path}: pair {pair.a}..{pair.b} is {pair.status}{': ' + pair.why if pair.why else ''}")
    booted = Path(pair.dir)
    meta = json.loads((booted / "compare.json").read_text())["meta"]
    budget = pair.budget or budget
    if not budget:
        raise InputError(f"{state_path}: pair {pair.a}..{pair.b} keeps no budget: give the sweep's --budget")
    return {"format": FORMAT, "board": meta["board"], "host": meta["host"], "measured": meta["written"][:10],
            "single": {"how": "the sweep's quick suites, one boot each, and the build's sizes",
                       "a": side_data(Path(runs[pair.a]), pair.a), "b": side_data(Path(runs[pair.b]), pair.b)},
            "booted": [stage(booted, pair.a, pair.b, "the sweep's pair (kernel.neighbours)", max(budget, EXACT_SHOWN))],
            "notes": []}


def stage(run: Path, a: str, b: str, why: str, max_repeats: int | None = None) -> dict:
    """The figures of one `boardlab compare` of kernels a and b (its compare.json and
    results.json): what it measured, in how many rounds, up to how many."""
    try:
        meta = json.loads((Path(run) / "compare.json").read_text())["meta"]
    except (OSError, ValueError, KeyError) as e:
        raise InputError(f"{Path(run) / 'compare.json'}: not a compare's ({e})") from None
    max_repeats = max_repeats or meta.get("max_repeats")
    if not max_repeats:
        raise InputError(f"{Path(run) / 'compare.json'}: keeps no --max-repeats (a compare before 2026-12-01)")
    sa, sb = side_data(run, a), side_data(run, b)
    return {"how": f"boardlab compare, the kernels booted in turn: {why}", "dir": str(run),
            "measured": meta["written"][:10], "host": meta["host"], "families": meta["families"],
            "rounds": meta["rounds"], "max_repeats": max_repeats, "jitter_s": _jitter_s(sa), "a": sa, "b": sb}


def _jitter_s(side: dict) -> int | None:
    """cyclictest's run length of the boots (their jitter figures' settings)."""
    runs = {(m.get("settings") or {}).get("run_s") for k, m in side["metrics"].items() if k.startswith("jitter.")}
    runs.discard(None)
    return runs.pop() if len(runs) == 1 else None


def side_of(d: dict, booted: bool):
    from boardlab.ab.compare import Side
    m = d["metrics"]
    return Side(d["label"], kernel=d["label"] if booted else None, board=d.get("board"), host=d.get("host"),
                identity=d.get("identity") or {},
                samples={k: list(v["samples"]) for k, v in m.items()},
                clocks={k: v.get("clock") for k, v in m.items()},
                settings={k: v.get("settings") for k, v in m.items()})


_JUDGED: dict[str, tuple] = {}   # the data's text -> its rows: pages and checks judge one pair once a process


def rows_of(data: dict):
    """The pair's rows as the sweep judged them: each metric from the latest boots in turn
    that measured it, else from the one boot each (kernel.neighbours.combined, stage by
    stage). Read only: the same data gives the same objects."""
    key = json.dumps(data, sort_keys=True)
    if key not in _JUDGED:
        _JUDGED[key] = _judged(data)
    return _JUDGED[key]


def _judged(data: dict):
    from boardlab.ab import compare
    from boardlab.kernel.neighbours import combined
    board = load_board(data["board"])
    a, b = side_of(data["single"]["a"], False), side_of(data["single"]["b"], False)
    rows = compare.judge(a, b, data["host"], board)
    for st in data.get("booted", []):
        sa, sb = side_of(st["a"], True), side_of(st["b"], True)
        st_rows = compare.judge(sa, sb, st["host"], board)
        compare.explain_unknown(st_rows, sa, sb, st["rounds"], st["max_repeats"])
        for side, before in ((sa, a), (sb, b)):   # the page names every row's clock
            side.clocks = {**before.clocks, **side.clocks}
        rows, a, b = combined(rows, st_rows), sa, sb
    return rows, a, b


def page(name: str, data: dict) -> str:
    from boardlab.pages.compare_page import answer
    rows, a, b = rows_of(data)
    head = [f"# {b.label} against {a.label} on {data['board']}: the whole answer", "",
            f"Generated by `boardlab gen` from [data/{name}.json](data/{name}.json), the figures it rests on; "
            f"`boardlab gen --check` says whether this page matches them. Measured from {data['measured']} on host "
            f"{data['host']}; each later step's figures replace the earlier ones' of the metrics it measured:", "",
            f"- One boot each: {data['single']['how']}."]
    for st in data.get("booted", []):
        head.append(f"- {', '.join(st['families'])}: {st['how']}; {st['measured']}, {st['rounds']} rounds (at least "
                    f"3, at most {st['max_repeats']} a side, more while a verdict was unknown)"
                    + (f", cyclictest {st['jitter_s']} s a run" if st.get("jitter_s") else "") + ".")
    head.append(f"- Kernels: {a.label}: {kernelid.describe(a.identity)}; {b.label}: {kernelid.describe(b.identity)}.")
    head.append(f"- Programs: {_programs(data)}.")
    notes = [n for n in data.get("notes", []) if n]
    return ("\n".join(head) + "\n\n" + ("\n\n".join(notes) + "\n\n" if notes else "") + answer(a, b, rows)
            + (_beside_study(rows, a, b, data["board"]) if data.get("beside_study") else ""))


def _beside_study(rows, a, b, board: str) -> str:
    """The study's own changes beside the pair's (a page whose data asks for them)."""
    from boardlab.pages import studybeside
    from boardlab.pages.compare_page import figure_clock
    return ("\n## Beside the study\n\nChanges, not figures: a virtual board is not the study's. Every metric "
            "of this pair the study measured too:\n\n"
            + studybeside.table(rows, board, f"{a.label} -> {b.label}", lambda spec: figure_clock(a, spec)))


def _programs(data: dict) -> str:
    """Whose programs measured the families that have a set (their figures' settings say it),
    over every step of the page's data."""
    from boardlab.measure import families
    said = {}
    steps = [data["single"]] + list(data.get("booted", []))
    for key, settings in ((k, m.get("settings")) for st in steps for side in (st["a"], st["b"])
                          for k, m in side["metrics"].items()):
        fam = key.split(".", 1)[0]
        if fam in families.BY_NAME and families.get(fam).tools is not None:
            said.setdefault(families.SET_WORDS[families.settings_set(settings)], set()).add(fam)
    return "; ".join(f"{words} for {', '.join(sorted(fams))}" for words, fams in sorted(said.items())) or "none"


def generated_files() -> dict[Path, str]:
    """docs/<name>.md for every docs/data/<name>.json."""
    return {PAGES_DIR / f"{p.stem}.md": page(p.stem, json.loads(p.read_text()))
            for p in sorted(DATA_DIR.glob("*.json"))}


def write(sweep_dir: Path, name: str, a: str | None = None, b: str | None = None,
          budget: int | None = None) -> tuple[Path, Path]:
    """docs/data/<name>.json from the sweep's pair (its notes kept), and the page from it."""
    data = pair_data(sweep_dir, a, b, budget)
    path = DATA_DIR / f"{name}.json"
    if path.exists():   # what a person wrote into the data stays: its notes, the study beside
        kept = json.loads(path.read_text())
        data["notes"] = kept.get("notes", [])
        data.update({k: kept[k] for k in ("beside_study",) if k in kept})
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, json.dumps(data, indent=1) + "\n")
    return path, _write_page(name, data)


def add_stage(name: str, run: Path, why: str | None = None) -> tuple[Path, Path]:
    """A later `boardlab compare` of the page's two kernels added to its data (its figures
    replace the earlier ones' of what it measured), and the page again; why: what the page
    says of it (default: the families left unknown measured again)."""
    path = DATA_DIR / f"{name}.json"
    if not path.exists():
        raise InputError(f"{path}: no such answer (`boardlab kernel answer --out SWEEP --name {name}` first)")
    data = json.loads(path.read_text())
    a, b = data["single"]["a"]["label"], data["single"]["b"]["label"]
    data["booted"] = [st for st in data.get("booted", []) if st.get("dir") != str(run)] + [
        stage(run, a, b, why or "the families left unknown measured again")]
    atomic_write(path, json.dumps(data, indent=1) + "\n")
    return path, _write_page(name, data)


def _write_page(name: str, data: dict) -> Path:
    md = PAGES_DIR / f"{name}.md"
    atomic_write(md, page(name, data))
    return md
