"""PNG figures of an evaluation (matplotlib, Agg backend, no display needed)."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from evaluation.figure_output import pyplot as _pyplot, save as _save
from evaluation.protocol_figures import write_protocol_figures


# How to read each figure, shown under it on the report page (one sentence on the axes, one on what to look for).
FIGURE_CAPTIONS = {
    "depth_curve.png": "Kendall's tau-b (y) between the system ranking on the sparse labels and on the labels "
                       "completed down to pool depth d (x), one line per metric. 1: the same order; a line that "
                       "falls as d grows means judging deeper reorders the systems for that metric.",
    "probe_heatmap.png": "One panel per system: PROBE for every alpha (rows) x beta (columns), normalised per cell "
                         "across systems (yellow: the best system in that cell, dark: the worst). A system yellow "
                         "everywhere wins whatever weights PROBE gives to ranks and to answers.",
    "discriminative_power.png": "For every pair of systems, the p-value of the test of their difference (y), pairs "
                                "sorted by p-value (x), one line per metric. The lower and the longer a curve stays "
                                "under the dashed 0.05 line, the more system pairs that metric tells apart.",
    "data_sensitivity.png": "Kendall's tau-b (y) between the ranking on a random share of the questions (x) and on "
                            "all of them, mean over draws with a band of one standard deviation. A curve that "
                            "reaches 1 early means fewer questions would have given the same ranking.",
    "open_world.png": "Kendall's tau-b (y) between the ranking after dropping a share of the true answers from the "
                      "completed labels (x) and the ranking with all of them. A curve that stays near 1 means the "
                      "ranking is robust to answers nobody found.",
    "reweighted.png": "Per metric, Kendall's tau-b with the sparse ranking of the completed ranking (left bar) and of "
                      "the completed ranking reweighted to the sparse relation mix (right bar). A right bar much "
                      "higher than the left one means the change of relation mix explains the change of ranking.",
    # issue 16: the protocols beyond link prediction (evaluation.protocol_figures)
    "classification_curves.png": "Triple classification, one row per label set (sparse, then completed), one "
                                 "colour per system: the ROC curve (left; true-positive rate y against false-positive "
                                 "rate x) and the precision-recall curve (right), for the first negatives source. A "
                                 "curve nearer the top-left (ROC) or top-right (PR) separates true triples from "
                                 "negatives better whatever threshold is used.",
    "pair_ranking_relations.png": "Entity-pair ranking: AP@K (y) of each relation (x, the relations with relevant "
                                  "pairs, most relevant pairs first), one colour per system, one panel per label set. "
                                  "MAP@K is the mean of the bars; a system strong on a few big relations and weak "
                                  "elsewhere has a high WMAP@K but a low MAP@K.",
    "protocol_kendall.png": "Kendall's tau-b between the system orderings of every two protocols and label sets "
                            "(link prediction by micro MRR, classification by accuracy, pair ranking by MAP@K, "
                            "property prediction by MRR). 1 (yellow): the same order; -1: reversed; blank: fewer "
                            "than two systems computed both.",
}

FIGURE_METRICS = ("micro_MRR", "micro_Hits@10", "macro_MRR", "macro_MAP@10", "macro_nDCG@10", "macro_bpref", "PROBE")


def _label_set_panels(plt: Any, frame: Any) -> tuple[Any, list[tuple[Any, str, Any]]]:
    """One panel per label set of ``frame``, side by side: the figure and (axes, label set, its rows)."""
    sets = list(dict.fromkeys(frame["label_set"]))
    fig, axes = plt.subplots(1, len(sets), figsize=(5.5 * len(sets), 4), squeeze=False)
    return fig, [(ax, name, frame[frame.label_set == name]) for ax, name in zip(axes[0], sets)]


def depth_curve_figure(result: Any, path: Path) -> bool:
    curve = result.depth_curve
    if curve is None or curve.empty:
        return False
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7, 4.2))
    metrics = [m for m in FIGURE_METRICS if m in curve.columns] or list(curve.columns)[:8]
    for metric in metrics:
        ax.plot(curve.index, curve[metric], marker="o", label=metric)
    ax.axhline(0, color="grey", lw=0.5)
    ax.set_xlabel("pool depth d")
    ax.set_ylabel("Kendall's tau-b (sparse vs completed@d)")
    ax.set_ylim(-1.05, 1.05)
    ax.set_xticks(list(curve.index))
    ax.legend(fontsize=8, ncol=2)
    ax.set_title(f"{result.sample}: system ordering vs pooling depth")
    return _save(fig, path)


def probe_heatmap_figure(result: Any, path: Path, label_set: str | None = None) -> bool:
    heatmaps = result.probe_heatmap
    if not heatmaps:
        return False
    label_set = label_set or ("completed" if "completed" in heatmaps else next(iter(heatmaps)))
    heat = heatmaps[label_set]
    values = np.asarray(heat["values"], dtype=np.float64)
    if values.ndim != 3:
        return False
    systems = heat["systems"]
    plt = _pyplot()
    columns = min(len(systems), 4)
    rows = int(np.ceil(len(systems) / columns))
    fig, axes = plt.subplots(rows, columns, figsize=(3.3 * columns + 1, 3.1 * rows + 0.4), squeeze=False,
                             constrained_layout=True)
    image = None
    for index, system in enumerate(systems):
        ax = axes[index // columns][index % columns]
        image = ax.imshow(values[:, :, index], vmin=0, vmax=1, cmap="viridis", aspect="auto")
        ax.set_title(system, fontsize=9)
        ax.set_xticks(range(len(heat["betas"])), [f"{b:g}" for b in heat["betas"]], fontsize=7)
        ax.set_yticks(range(len(heat["alphas"])), [f"{a:g}" for a in heat["alphas"]], fontsize=7)
        ax.set_xlabel("beta", fontsize=8)
        ax.set_ylabel("alpha", fontsize=8)
    for index in range(len(systems), rows * columns):
        axes[index // columns][index % columns].axis("off")
    if image is not None:
        fig.colorbar(image, ax=axes, shrink=0.8, label="min-max normalised PROBE")
    fig.suptitle(f"PROBE alpha x beta ({label_set} labels)")
    return _save(fig, path, tight=False)


def discriminative_power_figure(result: Any, path: Path) -> bool:
    frame = result.discriminative_power
    if frame is None or frame.empty:
        return False
    plt = _pyplot()
    fig, panels = _label_set_panels(plt, frame)
    for ax, set_name, sub in panels:
        for metric, group in sub.groupby("metric", sort=False):
            x = (group["position"].to_numpy() + 1) / len(group)
            ax.plot(x, group["pvalue"].to_numpy(), label=metric)
        ax.axhline(0.05, color="grey", lw=0.5, ls="--")
        ax.set_xlabel("system pairs (sorted by p-value)")
        test = "Sakai's paired bootstrap" if getattr(result, "options", {}).get("dp_test") == "bootstrap" \
            else "paired t-test"
        ax.set_ylabel(f"p-value ({test})")
        ax.set_title(f"{set_name} labels")
        ax.legend(fontsize=7)
    return _save(fig, path)


def data_sensitivity_figure(result: Any, path: Path) -> bool:
    frame = result.data_sensitivity
    if frame is None or frame.empty:
        return False
    plt = _pyplot()
    fig, panels = _label_set_panels(plt, frame)
    for ax, set_name, sub in panels:
        for metric, group in sub.groupby("metric", sort=False):
            x = group["fraction"].to_numpy(dtype=float) * 100
            mean = group["mean_tau"].to_numpy(dtype=float)
            std = group["std_tau"].to_numpy(dtype=float)
            (line,) = ax.plot(x, mean, marker=".", label=metric)
            ax.fill_between(x, np.clip(mean - std, -1, 1), np.clip(mean + std, -1, 1), color=line.get_color(),
                            alpha=0.15, linewidth=0)
        ax.set_xlabel("questions used (%)")
        ax.set_ylabel("tau-b vs all questions (mean, band: +-1 std)")
        ax.set_ylim(-1.05, 1.05)
        ax.set_title(f"{result.sample}: data sensitivity, {set_name} labels", fontsize=10)
        ax.legend(fontsize=7, loc="lower right")
    return _save(fig, path)


def open_world_figure(result: Any, path: Path) -> bool:
    frame = getattr(result, "open_world", None)
    if frame is None or frame.empty:
        return False
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7, 4.2))
    for metric, group in frame.groupby("metric", sort=False):
        x = group["drop_fraction"].to_numpy(dtype=float) * 100
        mean = group["mean_tau"].to_numpy(dtype=float)
        std = group["std_tau"].to_numpy(dtype=float)
        (line,) = ax.plot(x, mean, marker="o", label=metric)
        ax.fill_between(x, np.clip(mean - std, -1, 1), np.clip(mean + std, -1, 1), color=line.get_color(), alpha=0.12,
                        linewidth=0)
    ax.axhline(0, color="grey", lw=0.5)
    ax.set_xlabel("true answers dropped from the completed labels (%)")
    ax.set_ylabel("tau-b vs closed-world ordering (mean, +-1 std)")
    ax.set_ylim(-1.05, 1.05)
    ax.legend(fontsize=8, ncol=2, loc="lower left")
    ax.set_title(f"{result.sample}: open-world simulation", fontsize=10)
    return _save(fig, path)


def reweighted_figure(result: Any, path: Path) -> bool:
    frame = getattr(result, "reweighted_kendall", None)
    if frame is None or frame.empty:
        return False
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7, 4.2))
    metrics = list(frame.index)
    x = np.arange(len(metrics))
    width = 0.38
    ax.bar(x - width / 2, frame["tau_sparse_vs_completed"].to_numpy(dtype=float), width, label="completed")
    ax.bar(x + width / 2, frame["tau_sparse_vs_reweighted"].to_numpy(dtype=float), width,
           label="completed, sparse relation mix")
    ax.axhline(0, color="grey", lw=0.5)
    ax.set_xticks(x, metrics, rotation=30, ha="right", fontsize=8)
    ax.set_ylabel("Kendall's tau-b vs sparse ordering")
    ax.set_ylim(-1.05, 1.05)
    ax.legend(fontsize=8)
    ax.set_title(f"{result.sample}: does the relation mix explain the change of ranking?", fontsize=10)
    return _save(fig, path)


def write_figures(result: Any, out: Path) -> list[str]:
    """Every figure that has data; returns the file names written."""
    written = []
    for name, draw in (("depth_curve.png", depth_curve_figure), ("probe_heatmap.png", probe_heatmap_figure),
                       ("discriminative_power.png", discriminative_power_figure),
                       ("data_sensitivity.png", data_sensitivity_figure), ("open_world.png", open_world_figure),
                       ("reweighted.png", reweighted_figure)):
        if draw(result, Path(out) / name):
            written.append(name)
    return written + write_protocol_figures(result, out)
