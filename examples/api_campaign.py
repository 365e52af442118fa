# %% [markdown]
# # A campaign run from Python through kgpool's API
#
# Notebook-style (`# %%` cells: open it in Jupyter with jupytext, VS Code or PyCharm, or run it as a script).
# It needs a running kgpool (`kgpool runserver` or `python manage.py runserver`) and API tokens
# (`python manage.py drf_create_token USER`): a staff user's in `KGPOOL_TOKEN`, and, to judge here too, the tokens
# of two annotators and an adjudicator in `KGPOOL_ANNOTATOR_TOKENS` and `KGPOOL_ADJUDICATOR_TOKEN` (their usernames
# in `KGPOOL_ANNOTATORS` and `KGPOOL_ADJUDICATOR`). Data: Nations from ../shared/data (or `KGPOOL_DATASET`).

# %%
import os
from pathlib import Path

from kgpool.client import ApiError, Client

URL = os.environ.get("KGPOOL_URL", "http://127.0.0.1:8000")
DATASET = Path(os.environ.get("KGPOOL_DATASET", Path(__file__).resolve().parent.parent.parent / "shared/data/nations"))
KG, CAMPAIGN = os.environ.get("KGPOOL_KG", "nations"), os.environ.get("KGPOOL_CAMPAIGN", "nations-demo")
staff = Client(URL, token=os.environ["KGPOOL_TOKEN"])

# %% [markdown]
# ## 1. The knowledge graph: uploaded, imported in the background (the client waits for it)

# %%
if KG not in [kg["name"] for kg in staff.kgs()]:
    upload = staff.upload_kg(KG, DATASET)
    print(f"upload {upload['id']}: {upload['status']}")
print(staff.kg(KG))

# %% [markdown]
# ## 2. Two systems, a sample of test triples, their depth-5 pool

# %%
for architecture in ("distmult", "complex"):
    try:
        system = staff.system(KG, architecture)
    except ApiError:
        system = staff.train(KG, architecture, dim=32, epochs=50, lr=0.01, device="cpu", num_threads=1)
    print(f"{system['name']}: {system['status']}, valid MRR {system['valid_mrr']:.3f}")
samples = {s["name"]: s for s in staff.samples(KG)}
sample = samples.get("uniform-20-seed0") or staff.draw_sample(KG, 20, seed=0)
pools = [p for p in staff.pools(KG) if p["sample"] == sample["name"] and p["depth"] == 5]
pool = pools[0] if pools else staff.build_pool(KG, sample["name"], ["distmult", "complex"], depth=5)
print(f"pool {pool['id']}: {pool['entries']} candidates")
for entry in list(staff.pool_entries(pool["id"], page_size=3))[:3]:  # with provenance: who retrieved it, where
    print(entry["head"], entry["relation"], entry["tail"], entry["depth"], entry["hits"])

# %% [markdown]
# ## 3. The campaign: trivial filters, gold checks, members

# %%
if CAMPAIGN not in [c["name"] for c in staff.campaigns()]:
    staff.create_campaign(CAMPAIGN, pool["id"], filters=["cardinality"], gold=True, judging_order="kg_aware")
annotators = [name for name in os.environ.get("KGPOOL_ANNOTATORS", "").split(",") if name]
adjudicator = os.environ.get("KGPOOL_ADJUDICATOR", "")
for name in annotators:
    staff.add_member(CAMPAIGN, name, "annotator")
if adjudicator:
    staff.add_member(CAMPAIGN, adjudicator, "adjudicator")
print(staff.progress(CAMPAIGN))

# %% [markdown]
# ## 4. Judging (here a stand-in: each annotator answers by a rule; people use the site or the same calls)

# %%
tokens = [t for t in os.environ.get("KGPOOL_ANNOTATOR_TOKENS", "").split(",") if t]
for n, token in enumerate(tokens):
    person = Client(URL, token=token)
    while (handed := person.next_item(CAMPAIGN))["hand_out"] is not None:
        item = handed["item"]
        yes = (len(item["head"]["key"]) + len(item["tail"]["key"]) + n) % 3 == 0
        person.judge(CAMPAIGN, handed["hand_out"], "Y" if yes else "N", "https://en.wikipedia.org/wiki/Nation",
                     request_id=handed["request_id"])
if os.environ.get("KGPOOL_ADJUDICATOR_TOKEN"):
    judge = Client(URL, token=os.environ["KGPOOL_ADJUDICATOR_TOKEN"])
    while (conflict := judge.next_adjudication(CAMPAIGN))["hand_out"] is not None:
        judge.adjudicate(CAMPAIGN, conflict["hand_out"], conflict["answers"][0]["answer"], "the first source holds")
progress = staff.progress(CAMPAIGN)
quality = staff.quality(CAMPAIGN, samples=100)
print(f"{progress['decided']} of {progress['items']} decided; agreement {quality['agreement']}")

# %% [markdown]
# ## 5. The judged set (labels, and the whole bundle) and the evaluation on the completed labels

# %%
labels = staff.export(CAMPAIGN, "labels").decode()
print(f"{len(labels.splitlines())} labelled triples")
staff.export(CAMPAIGN, "bundle", f"{CAMPAIGN}.tar.gz")  # loads anywhere: kgpool.bundle.load, PyKEEN, pandas
if progress["done"]:
    run = staff.evaluate(KG, sample["name"], campaign=CAMPAIGN, analyses=False)
    for label_set in ("sparse", "completed"):
        for row in staff.results(run["id"])["tables"][label_set]:
            print(label_set, row["system"], f"micro MRR {row['micro_MRR']:.3f}")
