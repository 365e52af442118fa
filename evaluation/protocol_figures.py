"""PNG figures of the protocols beyond link prediction (issue 16): ROC / PR curves, AP@K per relation, and the
Kendall's tau heatmap between protocols' system orderings. matplotlib (Agg), drawn from an EvaluationResult."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from evaluation.figure_output import pyplot as _pyplot, save as _save  # captions: evaluation.figures.FIGURE_CAPTIONS



def classification_curves_figure(result: Any, path: Path) -> bool:
    protocols = getattr(result, "protocols", None)
    if protocols is None or not protocols.curves:
        return False
    sources = list(dict.fromkeys(source for _ls, source, _s in protocols.curves))
    source = sources[0]
    label_sets = [ls for ls in ("sparse", "completed") if any(k[0] == ls and k[1] == source for k in protocols.curves)]
    plt = _pyplot()
    fig, axes = plt.subplots(len(label_sets), 2, figsize=(10, 4 * len(label_sets)), squeeze=False)
    for row, label_set in enumerate(label_sets):
        roc_ax, pr_ax = axes[row]
        for (ls, src, system), curve in protocols.curves.items():
            if ls != label_set or src != source:
                continue
            fpr, tpr = curve["roc"]
            recall, precision = curve["pr"]
            roc_ax.plot(fpr, tpr, label=system)
            pr_ax.plot(recall, precision, label=system)
        roc_ax.plot([0, 1], [0, 1], color="grey", lw=0.5, ls="--")
        roc_ax.set_xlabel("false-positive rate")
        roc_ax.set_ylabel("true-positive rate")
        roc_ax.set_title(f"ROC, {label_set} labels, negatives {source}", fontsize=10)
        pr_ax.set_xlabel("recall")
        pr_ax.set_ylabel("precision")
        pr_ax.set_ylim(-0.02, 1.02)
        pr_ax.set_title(f"precision-recall, {label_set} labels, negatives {source}", fontsize=10)
        roc_ax.legend(fontsize=8)
        pr_ax.legend(fontsize=8)
    return _save(fig, path)


def pair_ranking_relations_figure(result: Any, path: Path) -> bool:
    protocols = getattr(result, "protocols", None)
    frame = None if protocols is None else protocols.pair_ranking_relations
    if frame is None or frame.empty:
        return False
    plt = _pyplot()
    label_sets = list(dict.fromkeys(frame.label_set))
    fig, axes = plt.subplots(len(label_sets), 1, figsize=(max(7.0, 0.25 * frame.relation.nunique() + 3),
                                                          3.6 * len(label_sets)), squeeze=False)
    for ax, label_set in zip(axes[:, 0], label_sets):
        sub = frame[frame.label_set == label_set]
        order = sub.groupby("relation")["relevant"].max().sort_values(ascending=False, kind="stable").index.tolist()
        systems = list(dict.fromkeys(sub.system))
        width = 0.8 / max(len(systems), 1)
        x = np.arange(len(order))
        for index, system in enumerate(systems):
            values = sub[sub.system == system].set_index("relation")["AP@K"].reindex(order).to_numpy(dtype=float)
            ax.bar(x + (index - (len(systems) - 1) / 2) * width, values, width, label=system)
        ax.set_xticks(x, order, rotation=90, fontsize=6)
        ax.set_ylabel(f"AP@{protocols.pair_k}")
        ax.set_ylim(0, 1.02)
        ax.set_title(f"entity-pair ranking per relation, {label_set} labels", fontsize=10)
        ax.legend(fontsize=8)
    return _save(fig, path)


def protocol_kendall_figure(result: Any, path: Path) -> bool:
    from evaluation.services.protocols import kendall_matrix

    protocols = getattr(result, "protocols", None)
    if protocols is None or protocols.kendall.empty:
        return False
    matrix = kendall_matrix(protocols.kendall)
    plt = _pyplot()
    size = 1.6 + 0.55 * len(matrix)
    fig, ax = plt.subplots(figsize=(size + 2.5, size))
    values = matrix.to_numpy(dtype=float)
    image = ax.imshow(np.ma.masked_invalid(values), vmin=-1, vmax=1, cmap="viridis")
    ax.set_xticks(range(len(matrix)), matrix.columns, rotation=60, ha="right", fontsize=7)
    ax.set_yticks(range(len(matrix)), matrix.index, fontsize=7)
    for i in range(len(matrix)):
        for j in range(len(matrix)):
            if np.isfinite(values[i, j]):
                ax.text(j, i, f"{values[i, j]:.2f}", ha="center", va="center", fontsize=6,
                        color="black" if values[i, j] > 0.3 else "white")
    fig.colorbar(image, ax=ax, label="Kendall's tau-b")
    ax.set_title("system orderings across protocols", fontsize=10)
    return _save(fig, path)


def write_protocol_figures(result: Any, out: Path) -> list[str]:
    written = []
    for name, draw in (("classification_curves.png", classification_curves_figure),
                       ("pair_ranking_relations.png", pair_ranking_relations_figure),
                       ("protocol_kendall.png", protocol_kendall_figure)):
        if draw(result, Path(out) / name):
            written.append(name)
    return written
