"""Writing a campaign's judged test set in the formats of SPEC 4.3 (gold checks are never exported)."""
from __future__ import annotations

import csv
import json
from typing import TextIO

from annotation.models import Campaign, Label
from annotation.selectors.labels import completed_labels, completed_questions, label_provenance
from annotation.selectors.quality import origin_name

FORMATS = ("labels", "positives", "questions", "qrels", "jsonl", "csv", "labels-origin", "qrels-annotator", "readme")

CSV_COLUMNS = [
    "head", "relation", "tail", "head_name", "tail_name", "label", "status", "origin", "rule", "depth", "systems",
    "questions", "judgment_1_annotator", "judgment_1_answer", "judgment_1_source_url", "judgment_1_quote",
    "judgment_1_given_at", "judgment_1_time_on_task_ms", "judgment_2_annotator", "judgment_2_answer",
    "judgment_2_source_url", "judgment_2_quote", "judgment_2_given_at", "judgment_2_time_on_task_ms",
    "adjudicator", "adjudication_label", "adjudication_reason", "flags",
    # added with issue 8 (appended so that existing readers keep their columns)
    "judgment_1_source_domain", "judgment_2_source_domain", "label_origin",
]


HISTORY_FORMATS = ("jsonl", "csv")


def export_judgments(campaign: Campaign, fmt: str, out: TextIO, *, annotator=None, with_history: bool = False) -> int:
    """Write the campaign in ``fmt`` to ``out``; returns the number of records (lines, rows) written.

    labels: ``h<TAB>r<TAB>t<TAB>Y|N`` (completed set: sampled test triples Y + every finally labelled pool
    triple); positives: ``h<TAB>r<TAB>t`` of the Y triples; questions: ``qid<TAB>entity<TAB>relation`` of the
    completed set's questions -- every question with a positive answer: the sample's and the other side of each
    positive pool triple, exactly the questions the evaluation ranks on the completed labels, so a system scored
    elsewhere on this file (``import_scores`` / ``import_run --questions``) evaluates like a trained one; qrels:
    ``qid 0 entity rel`` (TREC) of the final (adjudicated) labels; jsonl / csv:
    one record per triple with full provenance (both judgments with their evidence: source URL, domain, quote,
    time given); labels-origin: ``h<TAB>r<TAB>t<TAB>Y|N<TAB>origin`` (the completed set with where each label
    came from: unanimous, adjudicated, rule:<rule>, audit, reused, imported, test); qrels-annotator: the
    qrels of ``annotator``'s own answers (qids as in the final qrels, see
    ``annotation.selectors.quality.annotator_qrels``). ``with_history`` (jsonl, csv): each record also carries
    the history of its labels (``history``: a list in jsonl, a JSON column in csv): every version of its
    judgments, adjudication and expert labels with who, when, old and new answer and evidence, and why.
    """
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r}; formats: {', '.join(FORMATS)}")
    if with_history and fmt not in HISTORY_FORMATS:
        raise ValueError(f"the label history is exported with the {' and '.join(HISTORY_FORMATS)} formats, not {fmt}")
    if fmt == "labels-origin":
        from annotation.selectors.quality import labels_with_origin

        count = 0
        for h, r, t, label, origin in labels_with_origin(campaign):
            out.write(f"{h}\t{r}\t{t}\t{label}\t{origin}\n")
            count += 1
        return count
    if fmt == "readme":  # the set's datasheet (issue 20)
        from annotation.services.datasheet import datasheet

        text = datasheet(campaign)
        out.write(text)
        return text.count("\n")
    if fmt == "qrels-annotator":
        from annotation.selectors.quality import annotator_qrels

        if annotator is None:
            raise ValueError("the qrels-annotator format needs an annotator")
        count = 0
        for qid, entity, rel in annotator_qrels(campaign, annotator):
            out.write(f"{qid} 0 {entity} {rel}\n")
            count += 1
        return count
    count = 0
    if fmt in ("labels", "positives"):
        for triple in completed_labels(campaign):
            if fmt == "labels":
                out.write(f"{triple.head}\t{triple.relation}\t{triple.tail}\t{triple.label}\n")
            elif triple.label == Label.YES:
                out.write(f"{triple.head}\t{triple.relation}\t{triple.tail}\n")
            else:
                continue
            count += 1
    elif fmt in ("questions", "qrels"):
        for question in completed_questions(campaign):
            if fmt == "questions":
                out.write(f"{question.qid}\t{question.entity}\t{question.relation}\n")
                count += 1
                continue
            for entity, rel in question.answers:
                out.write(f"{question.qid} 0 {entity} {rel}\n")
                count += 1
    elif fmt == "jsonl":
        for record in label_provenance(campaign, with_history=with_history):
            out.write(json.dumps(record.as_dict(), ensure_ascii=False, sort_keys=True) + "\n")
            count += 1
    else:
        columns = CSV_COLUMNS + (["history"] if with_history else [])
        writer = csv.DictWriter(out, fieldnames=columns, lineterminator="\n")
        writer.writeheader()
        for record in label_provenance(campaign, with_history=with_history):
            row = {key: getattr(record, key) for key in CSV_COLUMNS[:10]}
            row.update(label=record.label or "", depth="" if record.depth is None else record.depth,
                       systems=";".join(record.systems), questions=";".join(record.questions),
                       flags=";".join(record.flags))
            row["label_origin"] = origin_name(record.origin, record.rule) if record.label else ""
            for n, judgment in enumerate(record.judgments[:2], start=1):
                for field in ("annotator", "answer", "source_url", "source_domain", "quote", "given_at", "time_on_task_ms"):
                    row[f"judgment_{n}_{field}"] = judgment[field]
            if record.adjudication:
                row.update(adjudicator=record.adjudication["adjudicator"],
                           adjudication_label=record.adjudication["label"],
                           adjudication_reason=record.adjudication["reason"])
            if with_history:
                row["history"] = json.dumps(record.history, ensure_ascii=False, sort_keys=True)
            writer.writerow(row)
            count += 1
    return count
