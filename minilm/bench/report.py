"""The benchmark's text table and its list of targets (the performance goals in DESIGN.md)."""
from __future__ import annotations

from .timing import machine_line

# (name, what, comparison, threshold): "≤" means value ≤ threshold passes
TARGETS = (
    ("gpt_mini_vs_torch", "GPT-mini step time / PyTorch eager's", "≤", 1.0),
    ("matmul_512_vs_blas", "numba matmul GFLOP/s / BLAS's at 512³", "≥", 0.35),
    ("fused_attention_speedup", "fused scale+mask+softmax fwd+bwd vs composed NumPy", "≥", 2.0),
    ("embedding_backward_speedup", "embedding backward vs np.add.at", "≥", 5.0),
    ("gpt_mini_memory_vs_torch", "peak RSS of the GPT-mini steps / PyTorch's", "≤", 1.0),
    ("cold_start_s", "seconds to the first step, cold numba cache", "≤", 15.0),
    ("warm_start_s", "seconds to the first step, warm numba cache", "≤", 3.0),
)


def _get(d, *keys):
    for k in keys:
        if not isinstance(d, dict) or k not in d:
            return None
        d = d[k]
    return d


def _values(result: dict) -> dict:
    matmul = _get(result, "kernels", "matmul") or []
    at_512 = [r["numba_vs_blas"] for r in matmul if r.get("shape") == "512x512x512"]
    ours, theirs = _get(result, "memory", "minilm", "step_peak_mb"), _get(result, "memory", "torch", "step_peak_mb")
    return {
        "gpt_mini_vs_torch": _get(result, "gpt_mini", "ratio"),
        "matmul_512_vs_blas": at_512[0] if at_512 else None,
        "fused_attention_speedup": _get(result, "kernels", "scaled_masked_softmax", "speedup"),
        "embedding_backward_speedup": _get(result, "kernels", "embedding_backward", "speedup"),
        "gpt_mini_memory_vs_torch": ours / theirs if ours and theirs else None,
        "cold_start_s": _get(result, "startup", "cold_s"),
        "warm_start_s": _get(result, "startup", "warm_s"),
    }


def targets(result: dict) -> list:
    """One entry per target: name, what, target ("≤ 1.0"), value (None if not measured), met."""
    values = _values(result)
    rows = []
    for name, what, op, threshold in TARGETS:
        v = values[name]
        met = None if v is None else (v <= threshold if op == "≤" else v >= threshold)
        rows.append({"name": name, "what": what, "target": f"{op} {threshold:g}", "value": v, "met": met})
    return rows


def _f(x, fmt="{:.1f}"):
    return "—" if x is None else fmt.format(x)


def _table(headers, rows) -> list:
    widths = [max(len(str(h)), *(len(str(r[i])) for r in rows)) if rows else len(str(h))
              for i, h in enumerate(headers)]
    line = lambda cells: "  ".join(str(c).ljust(w) if i == 0 else str(c).rjust(w)  # noqa: E731
                                   for i, (c, w) in enumerate(zip(cells, widths)))
    return [line(headers), line(["-" * w for w in widths])] + [line(r) for r in rows]


def format_table(result: dict) -> str:
    out = [f"machine: {machine_line(result['machine'])}", ""]
    steps = [(k, result[k]) for k in ("gpt_mini", "bert_mini") if k in result]
    if steps:
        cfg = result.get("config", {})
        out.append(f"Training steps (median of {cfg.get('steps')} after {cfg.get('warmup')} warm-up; "
                   f"{steps[0][1].get('workload', '')})")
        rows = []
        for name, r in steps:
            if "error" in r:
                rows.append([name, "error: " + r["error"][:60], "", "", ""])
                continue
            rows.append([name, _f(r["ms_per_step"]), _f(r["tokens_per_s"], "{:,.0f}"),
                         _f(r.get("torch_ms_per_step")), _f(r.get("ratio"), "{:.2f}")])
        out += _table(["workload", "ms/step", "tokens/s", "PyTorch ms/step", "ours/PyTorch"], rows) + [""]
    kern = result.get("kernels")
    if kern:
        rows = [[r["shape"], _f(r["blas_gflops"]), _f(r["numba_gflops"]), _f(r["task23_gflops"]),
                 _f(r["numba_vs_blas"], "{:.0%}")] for r in kern.get("matmul", [])]
        out += ["Matmul, float32 (GFLOP/s)"] + _table(
            ["M x K x N", "BLAS", "numba blocked", "Task 2.3 tiled", "blocked/BLAS"], rows) + [""]
        rows = [[name, r["shape"], _f(r["numba_ms"], "{:.3f}"), _f(r["numpy_ms"], "{:.3f}"),
                 _f(r["speedup"], "{:.1f}x"), r["default"]]
                for name, r in kern.items() if name != "matmul"]
        out += ["Fused kernels, forward + backward (ms; NumPy = the composed ops / np.add.at)"] + _table(
            ["op", "shape", "numba", "NumPy", "speed-up", "default"], rows)
        task = _get(kern, "scaled_masked_softmax", "task_ms")
        if task is not None:
            out.append(f"  (Task 2.4's reference kernel, which set_backend('numba', student_kernels=True) runs: "
                       f"{task:.3f} ms)")
        out.append("")
    mem = result.get("memory")
    if mem:
        rows = [[k, _f(v.get("step_peak_mb")), _f(v.get("peak_mb")), _f(v.get("baseline_mb"))]
                if "error" not in v else [k, "error: " + v["error"][:60], "", ""] for k, v in mem.items()]
        out += ["Memory of GPT-mini's training steps (MB; fresh process each)"] + _table(
            ["framework", "steps' peak - baseline", "peak RSS", "baseline"], rows) + [""]
    st = result.get("startup")
    if st:
        out += [f"Start-up to the first GPT-mini step: cold numba cache {_f(st.get('cold_s'))} s, "
                f"warm {_f(st.get('warm_s'))} s" + (f" ({st['error']})" if st.get("error") else ""), ""]
    rows = [[t["what"], t["target"], _f(t["value"], "{:.2f}"),
             "—" if t["met"] is None else ("yes" if t["met"] else "NO")] for t in result.get("targets", [])]
    out += ["Targets"] + _table(["", "target", "measured", "met"], rows)
    out.append(f"\n(bench took {result.get('seconds', 0):.0f} s)")
    return "\n".join(out)
