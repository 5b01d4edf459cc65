"""What identity injection costs on the embedded model: extraction per probe prompt, memory, per-call overhead.

Prints, side by side in one run: a probe prompt read with the hidden-state callback against the same
prompt evaluated plainly; the memory the second (capture) context adds; and a persona's questions
asked steered against unsteered, by elicitation. An unsteered survey persona's questions share the
card, whose evaluation the context reuses; a steered call starts from an empty context (a vector
change makes held keys and values stale), so the ratio includes that lost reuse. Asserts only that the
steered answers differ from the unsteered ones (the vectors act), never timings.

``make test`` runs a quick size (printed ratios, not sizes, are what it shows): vectors from 2 cards x 1
probe question, and a persona's first 2 questions; ``PVSST_BENCH_FULL=1`` gives 4 cards x 2 questions,
4 questions per persona, best of 3 and every scope of sampled calls.
"""
from __future__ import annotations

import os
import resource
import time

import numpy as np
import pandas as pd
import pytest

from pvsst.sim.identity.extraction import default_probes, extract_vectors, probe_messages, span_of
from pvsst.sim.identity.vectors import save_vectors
from pvsst.sim.llm.providers import embedded
from pvsst.sim.llm.providers.llama_hidden import HiddenStateReader
from pvsst.sim.llm.steering import SCOPES, Steering

pytestmark = [pytest.mark.benchmark, pytest.mark.embedded, pytest.mark.slow]
MODEL = "smollm2-135m"
FULL = os.environ.get("PVSST_BENCH_FULL") == "1"
REPEATS = 3 if FULL else 1
CARD = "I am a woman from Ohio, 45 years old, with a bachelor's degree."
SYSTEM = "Answer the survey question as the person described."
QUESTIONS = [f"{question} Answer yes or no." for question in default_probes()[:4 if FULL else 2]]
PLACES = ("Ohio", "Texas") if FULL else ("Ohio",)
N_PROBES = 2 if FULL else 1


def _rss_mib() -> float:
    with open("/proc/self/statm") as handle:
        return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def _peak_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux: KiB


def _persona_calls(steering, *, logprobs: bool) -> tuple[float, list]:
    """A persona's questions in a row; seconds per call and the answers."""
    started, answers = time.perf_counter(), []
    for question in QUESTIONS:
        messages = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": f"{CARD}\n\n{question}"}]
        if logprobs:
            answers.append(embedded.option_logprobs(MODEL, messages, ["yes", "no"], steering)["logprobs"])
        else:
            answers.append(embedded.generate(MODEL, messages, temperature=0.7, max_tokens=16, seed=3, schema=None,
                                             steering=steering)["text"])
    return (time.perf_counter() - started) / len(QUESTIONS), answers


def test_identity_injection_cost(tmp_path, show):
    llama = embedded.load_model(MODEL)
    table = pd.DataFrame([{"persona_id": f"{sex}{i}", "sex": sex, "card": f"I am a {noun} from {place}."}
                          for i, place in enumerate(PLACES) for sex, noun in (("female", "woman"),
                                                                                          ("male", "man"))])
    questions = default_probes()[:N_PROBES]
    prompts = [probe_messages(card, q) for card in table["card"] for q in questions]
    tokens = [span_of(llama, m, "user")[0] for m in prompts]

    before = _rss_mib()
    with HiddenStateReader(llama, range(30)) as reader:
        reader.read(tokens[0])
        opened = _rss_mib()
        best_read = best_plain = float("inf")
        for _ in range(REPEATS):
            started = time.perf_counter()
            for sequence in tokens:
                reader.read(sequence)
            best_read = min(best_read, (time.perf_counter() - started) / len(tokens))
            started = time.perf_counter()
            with embedded._LOCK:
                for sequence in tokens:
                    llama.reset()
                    llama.eval(sequence)
                llama.reset()
            best_plain = min(best_plain, (time.perf_counter() - started) / len(tokens))
    started = time.perf_counter()
    vectors = extract_vectors(table, ["sex"], questions, model=MODEL, layers=range(8, 17), seed=0)
    extract_s = (time.perf_counter() - started) / len(prompts)
    path = tmp_path / "sex.npz"
    sha = save_vectors(vectors, path)

    rows = []
    for logprobs in (True, False):
        for scope in SCOPES if logprobs or FULL else ("all",):
            steering = Steering(vectors=str(path), vectors_sha256=sha, attributes=(("sex", "male"),),
                                layers=(10, 11, 12, 13, 14), coef=2.0, noise_sigma=0.3, noise_seed=1, scope=scope)
            plain_s = steered_s = float("inf")
            for _ in range(REPEATS):
                plain, plain_answers = _persona_calls(None, logprobs=logprobs)
                steered, steered_answers = _persona_calls(steering, logprobs=logprobs)
                plain_s, steered_s = min(plain_s, plain), min(steered_s, steered)
            if logprobs:
                assert steered_answers != plain_answers, scope
            rows.append(("logprobs" if logprobs else "sampled, 16 tokens", scope, plain_s, steered_s))

    mean_tokens = np.mean([len(t) for t in tokens])
    show(f"\nidentity injection on {MODEL}, {os.cpu_count()} cores, best of {REPEATS}")
    show(f"  probe prompt ({mean_tokens:.0f} tokens, 30 layers read): {best_read * 1e3:.0f} ms with the callback, "
         f"{best_plain * 1e3:.0f} ms plain: ratio {best_read / best_plain:.2f}")
    show(f"  extract_vectors (9 layers stored): {extract_s * 1e3:.0f} ms per probe prompt, "
         f"{extract_s / best_plain:.2f} x a plain evaluation")
    show(f"  memory: the capture context adds {opened - before:.0f} MiB RSS; process peak RSS {_peak_mib():.0f} MiB")
    show(f"  per call, a persona's {len(QUESTIONS)} questions in a row (unsteered calls reuse the card's evaluation):")
    for kind, scope, plain_s, steered_s in rows:
        show(f"    {kind:20s} scope {scope:8s}: unsteered {plain_s * 1e3:6.0f} ms, steered {steered_s * 1e3:6.0f} ms, "
             f"ratio {steered_s / plain_s:.2f}")
