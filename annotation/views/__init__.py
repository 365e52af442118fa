"""Judging pages (annotators, adjudicators) and campaign management pages. Thin: every rule is in
annotation.services / annotation.selectors; torch is never imported here."""
