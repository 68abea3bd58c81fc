"""Batched search for the recurrent copy models: greedy, sampling (top-k, top-p, temperature) and beam
search, with the semantics of transformers' generate() for the same GenerationConfig.

transformers' generate() expects an attention key/value cache, which a recurrent decoder with copy
attention and coverage does not have, so the search loop is written here once; the per-step rules
(minimum length, no-repeat n-grams, temperature, top-k, top-p) are transformers' own logits processors.
Lengths count as generate() counts them: `max_length` and `min_length` include the decoder start token.

Beam search keeps `num_beams` running hypotheses per input, takes the best 2 x num_beams expansions each
step, finishes a hypothesis at EOS (when its rank is below num_beams), scores finished hypotheses by
sum log p / (generated tokens incl. EOS) ** length_penalty, and stops an input once it has num_beams
finished hypotheses that no running one can still beat (the exact bound: transformers' early_stopping
"never"), or, with early_stopping true, as soon as it has num_beams finished hypotheses (FocusSeq2Seq).
"""

from __future__ import annotations

import torch
from transformers import GenerationConfig
from transformers.generation.logits_process import (
    LogitsProcessorList,
    MinLengthLogitsProcessor,
    NoRepeatNGramLogitsProcessor,
    TemperatureLogitsWarper,
    TopKLogitsWarper,
    TopPLogitsWarper,
)


def max_length(config: GenerationConfig) -> int:
    return 20 if config.max_length is None else config.max_length  # generate()'s default


def select_rows(state: dict[str, torch.Tensor], index: torch.Tensor) -> dict[str, torch.Tensor]:
    return {name: tensor.index_select(0, index) for name, tensor in state.items()}


def producible(model, source_ids: torch.Tensor) -> torch.Tensor:
    """[N, output_size] True where a token may be emitted: the generator's words except padding, the start
    token and <unk> (FocusSeq2Seq forbids UNK in greedy, sampling and beam search, layers/decoder.py lines
    303, 670 and 701; an unknown source word is still copied, through its placeholder), and the copy
    placeholders this row's source holds."""
    config = model.config
    allowed = torch.zeros(source_ids.shape[0], config.output_size, dtype=torch.bool, device=source_ids.device)
    allowed[:, : config.vocab_size] = True
    if config.copy:
        allowed.scatter_(1, source_ids, True)
    allowed[:, [config.pad_token_id, config.decoder_start_token_id, config.unk_token_id]] = False
    return allowed


def processors(config: GenerationConfig, eos: int, device: torch.device) -> LogitsProcessorList:
    chain = LogitsProcessorList()
    if config.min_length and config.min_length > 0:
        chain.append(MinLengthLogitsProcessor(config.min_length, eos, device=str(device)))
    if config.no_repeat_ngram_size:
        chain.append(NoRepeatNGramLogitsProcessor(config.no_repeat_ngram_size))
    return chain


def warpers(config: GenerationConfig) -> LogitsProcessorList:
    chain = LogitsProcessorList()
    if config.temperature is not None and config.temperature != 1.0:
        chain.append(TemperatureLogitsWarper(config.temperature))
    if config.top_k:
        chain.append(TopKLogitsWarper(config.top_k))
    if config.top_p is not None and config.top_p < 1.0:
        chain.append(TopPLogitsWarper(config.top_p))
    return chain


def search(model, input_ids: torch.Tensor, attention_mask: torch.Tensor | None, features: dict, config: GenerationConfig) -> torch.Tensor:
    encoded, state = model.encode(input_ids, attention_mask, features)
    if (config.num_beams or 1) > 1 and not config.do_sample:
        return beam_search(model, encoded, state, config)
    copies = config.num_return_sequences or 1
    if copies > 1:
        rows = torch.arange(input_ids.shape[0], device=input_ids.device).repeat_interleave(copies)
        encoded, state = encoded.select(rows), select_rows(state, rows)
    return sample_or_greedy(model, encoded, state, config)


def sample_or_greedy(model, encoded, state: dict, config: GenerationConfig) -> torch.Tensor:
    eos, pad = model.config.eos_token_id, model.config.pad_token_id
    rows = encoded.source_ids.shape[0]
    device = encoded.source_ids.device
    forbidden = producible(model, encoded.source_ids).logical_not_()  # once, not at every step
    rules, sampling = processors(config, eos, device), warpers(config) if config.do_sample else None
    sequences = torch.full((rows, 1), model.config.decoder_start_token_id, dtype=torch.long, device=device)
    finished = torch.zeros(rows, dtype=torch.bool, device=device)
    for _ in range(max_length(config) - 1):
        log_probs, state, _ = model.step(sequences[:, -1], state, encoded)
        scores = rules(sequences, log_probs.masked_fill_(forbidden, float("-inf")))
        if sampling is not None:
            scores = sampling(sequences, scores)
            tokens = multinomial_draw(torch.softmax(scores, dim=-1))
        else:
            tokens = scores.argmax(-1)
        tokens = tokens.masked_fill(finished, pad)
        sequences = torch.cat([sequences, tokens.unsqueeze(1)], dim=1)
        finished |= tokens.eq(eos)
        if finished.all():
            break
    return sequences


def multinomial_draw(probs: torch.Tensor) -> torch.Tensor:
    """torch.multinomial(probs, 1).squeeze(1) [N]: the same tokens from the same random numbers, and the
    generator left where multinomial leaves it. On the CPU multinomial draws q ~ Exp(1) for every entry,
    -log1p(-u) of one float64 uniform each, and takes the first argmax of p / q; the log is most of a sampled
    search step's time, and only the entries with p > 0 (top-k keeps a few) can win. So this draws the same
    uniforms and takes the log and the maximum at those entries alone (tests/test_recurrent_search.py)."""
    rows, size = probs.shape
    if probs.device.type != "cpu" or probs.dtype not in (torch.float32, torch.float64) or not probs.amin() >= 0:
        return torch.multinomial(probs, 1).squeeze(1)  # (and multinomial's own error on a NaN or negative entry)
    uniform = torch.empty(probs.shape, dtype=torch.float64).uniform_()
    if not uniform.amin() > 0:  # a zero gives q = 0, and 0 / 0 a NaN that multinomial's argmax picks: take its way
        return torch.div(probs, torch.log1p(-uniform).neg_().to(probs.dtype)).argmax(-1)
    row, column = probs.gt(0).nonzero(as_tuple=True)
    ratios = probs[row, column] / torch.log1p(-uniform[row, column]).neg_().to(probs.dtype)
    best = ratios.new_zeros(rows).scatter_reduce_(0, row, ratios, "amax")
    at_best = ratios == best[row]
    first = column.new_full((rows,), size).scatter_reduce_(0, row[at_best], column[at_best], "amin")
    if (first == size).any():  # a row without a positive entry: multinomial's error
        return torch.multinomial(probs, 1).squeeze(1)
    return first


class Finished:
    """The finished hypotheses of one input, best first, at most `size` of them."""

    def __init__(self, size: int, length_penalty: float, early_stopping: bool = False):
        self.size, self.length_penalty, self.early_stopping = size, length_penalty, early_stopping
        self.hypotheses: list[tuple[float, list[int]]] = []

    def add(self, tokens: list[int], sum_logprobs: float, generated: int) -> None:
        score = sum_logprobs / generated**self.length_penalty
        self.hypotheses.append((score, tokens))
        self.hypotheses.sort(key=lambda item: -item[0])
        del self.hypotheses[self.size :]

    def done(self, best_running: float, generated: int, most_generated: int) -> bool:
        """Whether no running hypothesis (best sum log p `best_running` after `generated` tokens) can
        still enter: log-probabilities only fall, so its best normalised score is at `most_generated`
        tokens for a positive length penalty and at `generated` tokens otherwise."""
        if len(self.hypotheses) < self.size:
            return False
        if self.early_stopping:  # FocusSeq2Seq's and fairseq's rule: num_beams hypotheses have ended
            return True
        length = most_generated if self.length_penalty > 0 else generated
        return best_running / length**self.length_penalty <= self.hypotheses[-1][0]


def beam_search(model, encoded, state: dict, config: GenerationConfig) -> torch.Tensor:
    eos, pad, start = model.config.eos_token_id, model.config.pad_token_id, model.config.decoder_start_token_id
    inputs, beams = encoded.source_ids.shape[0], config.num_beams
    device = encoded.source_ids.device
    rows = torch.arange(inputs, device=device).repeat_interleave(beams)
    encoded, state = encoded.select(rows), select_rows(state, rows)
    forbidden = producible(model, encoded.source_ids).logical_not_()
    rules = processors(config, eos, device)
    scores = torch.zeros(inputs, beams, device=device)
    scores[:, 1:] = float("-inf")  # every beam starts as the same hypothesis: expand only the first
    sequences = torch.full((inputs * beams, 1), start, dtype=torch.long, device=device)
    length_penalty = 1.0 if config.length_penalty is None else config.length_penalty  # generate()'s default
    finished = [Finished(beams, length_penalty, config.early_stopping is True) for _ in range(inputs)]
    done = [False] * inputs
    most_generated = max_length(config) - 1
    for generated in range(1, most_generated + 1):
        log_probs, state, _ = model.step(sequences[:, -1], state, encoded)
        step_scores = rules(sequences, log_probs.masked_fill_(forbidden, float("-inf")))
        totals = (scores.view(-1, 1) + step_scores).view(inputs, -1)
        top_scores, top_ids = totals.topk(2 * beams, dim=1)
        next_scores, next_tokens, next_rows, ending = expansions(top_scores, top_ids, step_scores.shape[-1], beams, eos, pad, done)
        for example, candidate in ending.nonzero().tolist():  # in rank order, as Finished keeps equal scores
            row = example * beams + int(top_ids[example, candidate]) // step_scores.shape[-1]
            finished[example].add([*sequences[row].tolist(), eos], top_scores[example, candidate].item(), generated)
        kept, best_running = next_tokens.ne(pad).any(1).tolist(), next_scores[:, 0].tolist()
        for example in range(inputs):
            if not done[example]:
                done[example] = not kept[example] or finished[example].done(best_running[example], generated, most_generated)
        scores = next_scores.masked_fill(next_tokens.eq(pad), float("-inf"))
        flat_rows = next_rows.view(-1)
        sequences = torch.cat([sequences.index_select(0, flat_rows), next_tokens.view(-1, 1)], dim=1)
        state = select_rows(state, flat_rows)
        if all(done):
            break
    for example in range(inputs):  # inputs still running at the length limit end without EOS
        if not done[example]:
            for beam in range(beams):
                if scores[example, beam] > float("-inf"):
                    finished[example].add(sequences[example * beams + beam].tolist(), scores[example, beam].item(), most_generated)
    return pad_sequences([hypothesis for item in finished for hypothesis in best(item, config)], pad, device)


def expansions(
    top_scores: torch.Tensor, top_ids: torch.Tensor, vocabulary: int, beams: int, eos: int, pad: int, done: list[bool]
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """Each running input's next beams from its 2 x num_beams best expansions [inputs, 2 x beams] (best first,
    ids flat over beam x vocabulary): the first num_beams that do not end in EOS, as (scores, tokens, rows of
    the beam they extend) [inputs, beams] (a slot left empty: score 0, token `pad`, the input's first row),
    and [inputs, 2 x beams] True at the EOS expansions ranked within the first num_beams, which finish."""
    inputs, width = top_scores.shape
    beam, token = top_ids.div(vocabulary, rounding_mode="floor"), top_ids.remainder(vocabulary)
    live = top_scores.gt(float("-inf")) & torch.tensor(done, device=top_scores.device).logical_not().unsqueeze(1)
    ends = live & token.eq(eos)
    going = live & ~ends
    rank = going.cumsum(1) - 1
    slot = torch.where(going & rank.lt(beams), rank, beams)  # slot `beams`: a column dropped after the writes
    first_row = torch.arange(inputs, device=top_ids.device).unsqueeze(1) * beams
    scores = top_scores.new_zeros(inputs, beams + 1).scatter_(1, slot, top_scores)
    tokens = token.new_full((inputs, beams + 1), pad).scatter_(1, slot, token)
    rows = first_row.expand(inputs, beams + 1).clone().scatter_(1, slot, first_row + beam)
    ranked_first = torch.arange(width, device=top_ids.device).lt(beams)
    kept = (table[:, :beams].contiguous() for table in (scores, tokens, rows))
    return *kept, ends & ranked_first


def best(item: Finished, config: GenerationConfig) -> list[list[int]]:
    return [tokens for _, tokens in item.hypotheses[: config.num_return_sequences or 1]]


def pad_sequences(sequences: list[list[int]], pad: int, device: torch.device) -> torch.Tensor:
    width = max(len(tokens) for tokens in sequences)
    return torch.tensor([tokens + [pad] * (width - len(tokens)) for tokens in sequences], dtype=torch.long, device=device)
