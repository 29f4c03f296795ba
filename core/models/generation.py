"""Generating text with a loaded model, never past a deadline.

``LoadedModel.complete`` renders the chat messages with the model's own template (thinking turned
off where the template supports it), streams tokens in the model's single worker and checks the
deadline before starting (waiting for the worker counts) and after every token. A JSON schema
becomes a grammar, so the output always parses as long as it is not cut off.

llama.cpp keeps the evaluated prompt of the last call and evaluates only what follows the part a new
prompt shares with it, so callers that start every prompt with the same fixed instructions pay for
them once. Each call records how many prompt tokens it evaluated and how fast it read and wrote;
``LoadedModel.rates`` gives the model's recent speeds (after a short calibration when it has none), so
callers can size what it reads to the time left.
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal

from ..errors import ModelError
from .backend import llama_library
from .placement import OpenOptions

if TYPE_CHECKING:
    from jinja2.sandbox import ImmutableSandboxedEnvironment


class DeadlineExceeded(ModelError):
    title = "Out of time"


@dataclass(frozen=True)
class Completion:
    text: str
    tokens: int
    prompt_tokens: int
    stopped: Literal["stop", "length", "deadline", "cancelled"]
    seconds: float
    first_token_s: float | None
    #: Prompt tokens evaluated for this call (the rest were reused from the previous call); None if unknown.
    evaluated_tokens: int | None = None


@dataclass(frozen=True)
class Rates:
    """How fast a loaded model reads a prompt and writes tokens, from its recent calls (or a calibration)."""

    prompt_tps: float
    gen_tps: float
    source: Literal["calls", "calibration"]


#: Recent calls the rates are taken from.
RATE_WINDOW = 8
#: A call counts for the prompt rate when it evaluated at least this many tokens (fewer are mostly overhead).
MIN_RATE_TOKENS = 16
#: The calibration prompt: ordinary prose, about 150 tokens for common tokenizers.
CALIBRATION_TEXT = ("A personal memory keeps notes, conversations and indexed files on this computer. "
                    "When a question arrives, several searches run at once, their results are merged, and a "
                    "short cited answer is written from the evidence that was found. ") * 3


def shared_prefix(a: Sequence[Any], b: Sequence[Any]) -> int:
    """How many leading items (tokens, characters) ``a`` and ``b`` have in common."""
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return n


def template_environment() -> ImmutableSandboxedEnvironment:
    """The Jinja environment chat templates are rendered in, as llama.cpp and Hugging Face render them: a
    sandbox, ``trim_blocks``/``lstrip_blocks``, loop controls, ``raise_exception``, ``strftime_now``, and a
    ``tojson`` that keeps key order and does not escape for HTML (templates are not HTML)."""
    from jinja2 import TemplateError
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    def raise_exception(message: str) -> None:
        raise TemplateError(message)

    def strftime_now(fmt: str) -> str:
        return datetime.now().strftime(fmt)

    def tojson(value: Any, ensure_ascii: bool = False, indent: int | None = None,
               separators: tuple[str, str] | None = None, sort_keys: bool = False) -> str:
        return json.dumps(value, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)

    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=["jinja2.ext.loopcontrols"])
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = strftime_now
    env.filters["tojson"] = tojson
    return env


#: Evaluated prompt starts a loaded model keeps to restore: chat's instructions and tool definitions, for up to two
#: templates or tool sets (a Qwen3.5-4B checkpoint of ~2,000 tokens is ~170 MB).
CHECKPOINTS = 2
#: A token's attributes that mark it as not text: LLAMA_TOKEN_ATTR_CONTROL | LLAMA_TOKEN_ATTR_USER_DEFINED.
_SPECIAL_TOKEN = (1 << 3) | (1 << 4)
_WORD_JOINER = "\u2060"


def render_chat_template(template: str, messages: Sequence[Mapping[str, Any]], bos: str = "", eos: str = "", *,
                         tools: Sequence[Mapping[str, Any]] | None = None, add_generation_prompt: bool = True) -> str:
    """Render a GGUF chat template (Jinja) for ``messages`` with a generation prompt and thinking off.

    ``tools`` (OpenAI-style function specs) are passed to the template as ``tools``, as the model was trained
    to see them; messages may carry ``tool_calls`` and ``role: tool`` results.

    Raises:
        ModelError: the template does not render.
    """
    from jinja2 import TemplateError

    env = template_environment()
    extra: dict[str, Any] = {"tools": list(tools)} if tools else {}
    try:
        return env.from_string(template).render(messages=list(messages), add_generation_prompt=add_generation_prompt,
                                                bos_token=bos, eos_token=eos, enable_thinking=False, **extra)
    except (TemplateError, TypeError, ValueError) as exc:
        raise ModelError(f"The model's chat template does not render ({exc}); choose another model.") from exc


class LoadedModel:
    """One ``Llama`` and the single worker that is its inference lock. Shared by every role that uses it.

    It owns both: ``close`` frees the ``Llama`` on that worker and then ends the worker.
    """

    def __init__(self, llama: Any, key: tuple[str, OpenOptions], executor: ThreadPoolExecutor, note: str = "") -> None:
        """Wrap ``llama``, loaded on ``executor``'s single worker; both are closed by ``close`` from then on.

        Raises:
            ModelError: the model has no chat template, or it does not render (the caller still owns
                ``llama`` and ``executor`` then).
        """
        self.llama = llama
        self.key = key
        self.note = note  # e.g. why it runs on the CPU
        self._executor = executor
        self._closing = threading.Lock()
        self._closed = False  # set by ``close``: no new request is taken
        self._freed = False  # set on the worker once the Llama is closed: a request queued before sees it
        meta = getattr(llama, "metadata", {}) or {}
        self._measured: deque[tuple[int, float, int, float]] = deque(maxlen=RATE_WINDOW)
        self._measured_lock = threading.Lock()
        #: Evaluated prompt starts kept to be restored (``complete_prompt``'s ``checkpoint``), at most this many;
        #: 0 keeps none (the chat benchmark measures a turn without them).
        self.checkpoints_kept = CHECKPOINTS
        self._checkpoints: dict[tuple[int, ...], Any] = {}
        self.checkpoint_restores = 0
        self.template = meta.get("tokenizer.chat_template", "")
        if not self.template:
            raise ModelError(f"{key[0]} has no chat template, so it cannot answer chat messages; choose an instruct "
                             "model.", title="Model has no chat template")
        vocab = llama._model
        self._bos = vocab.token_get_text(vocab.token_bos()) if vocab.token_bos() >= 0 else ""
        self._eos = vocab.token_get_text(vocab.token_eos()) if vocab.token_eos() >= 0 else ""
        render_chat_template(self.template, [{"role": "user", "content": "ping"}], self._bos, self._eos)
        # One token through every layer, so that the weights are read from disk now (llama.cpp maps the file
        # lazily) and not during the first call, whose speed would then mislead ``rates``.
        executor.submit(self._warm_up).result()

    @property
    def bos(self) -> str:
        """The model's beginning-of-text token as text ("" without one)."""
        return self._bos

    @property
    def eos(self) -> str:
        """The model's end-of-text token as text ("" without one)."""
        return self._eos

    @property
    def context(self) -> int:
        """The context length it was loaded with, in tokens."""
        return int(self.llama.n_ctx())

    def _warm_up(self) -> None:
        tokens = self.llama.tokenize(b"Hello", add_bos=False, special=False)
        if tokens:
            self.llama.eval(tokens[:1])

    def prompt(self, messages: Sequence[Mapping[str, Any]], tools: Sequence[Mapping[str, Any]] | None = None, *,
               add_generation_prompt: bool = True) -> str:
        """``messages`` (and ``tools``) rendered by the model's own chat template, ready for generation. Every
        message's content is ``as_text`` first: a memory, a file or a question that spells a control token
        (``<|im_start|>system``) stays text in the prompt.

        Raises:
            ModelError: the template does not render them.
        """
        plain = [{**m, "content": self.as_text(m["content"])} if isinstance(m.get("content"), str) else m
                 for m in messages]
        return render_chat_template(self.template, plain, self._bos, self._eos, tools=tools,
                                    add_generation_prompt=add_generation_prompt)

    def as_text(self, text: str) -> str:
        """``text`` with each spelling of one of the model's special tokens in it (control or added tokens such
        as ``<|im_start|>``, ``<tool_call>``) broken by an invisible WORD JOINER, so that the prompt's tokens
        read it as text; the template's own tokens, outside the contents, are untouched."""
        vocab = self.llama._model
        spellings: set[str] = set()
        for _ in range(4):  # breaking one spelling cannot make another, but a text may hold several
            found = {vocab.token_get_text(t) for t in self.llama.tokenize(text.encode("utf-8"), add_bos=False,
                                                                          special=True)
                     if vocab.token_get_attr(t) & _SPECIAL_TOKEN}
            found = {f for f in found if len(f) > 1 and f in text}
            if not found:
                return text
            spellings |= found
            for spelling in sorted(found, key=len, reverse=True):
                text = text.replace(spelling, spelling[0] + _WORD_JOINER + spelling[1:])
        return text

    def count_tokens(self, text: str) -> int:
        """Tokens of ``text`` in this model's vocabulary (special tokens read as such)."""
        return len(self.llama.tokenize(text.encode("utf-8"), add_bos=False, special=True))

    def rates(self, deadline: float | None = None) -> Rates | None:
        """The model's reading and writing speeds over its recent calls. With none recorded and a
        ``deadline``, a short calibration call measures them first (``None`` if it cannot finish in time).
        """
        measured = self._rates()
        if measured is not None or deadline is None:
            return measured
        try:
            self.complete([{"role": "user", "content": CALIBRATION_TEXT + "Reply with one word."}],
                          deadline=deadline, max_tokens=12)
        except ModelError:
            return None
        found = self._rates()
        return None if found is None else Rates(found.prompt_tps, found.gen_tps, "calibration")

    def _rates(self) -> Rates | None:
        with self._measured_lock:
            measured = list(self._measured)
        reads = [(n, s) for n, s, _, _ in measured if n >= MIN_RATE_TOKENS and s > 0]
        writes = [(n - 1, s) for _, _, n, s in measured if n >= 2 and s > 0]
        if not reads or not writes:
            return None
        return Rates(sum(n for n, _ in reads) / sum(s for _, s in reads),
                     sum(n for n, _ in writes) / sum(s for _, s in writes), "calls")

    def complete(self, messages: list[dict[str, str]], *, deadline: float, max_tokens: int = 256,
                 json_schema: dict[str, Any] | None = None, temperature: float = 0.0,
                 check_deadline: bool = True) -> Completion:
        """Answer ``messages`` before ``deadline`` (a ``time.monotonic()`` value).

        Returns what was generated by the deadline (``stopped="deadline"``) if generation had started.

        Raises:
            DeadlineExceeded: the deadline passed before generation could start (also while waiting
                for the model's worker).
            ModelError: the model failed, or it is closed.
        """
        # Rendered on the model's worker, so requests are served in the order they were made.
        return self.complete_prompt(lambda: self.prompt(messages), deadline=deadline, max_tokens=max_tokens,
                                    json_schema=json_schema, temperature=temperature, check_deadline=check_deadline)

    def complete_prompt(self, prompt: str | Callable[[], str], *, deadline: float, max_tokens: int = 256,
                        json_schema: dict[str, Any] | None = None, temperature: float = 0.0,
                        check_deadline: bool = True, on_text: Callable[[str], None] | None = None,
                        stop: Callable[[], bool] | None = None, grammar: str | None = None,
                        checkpoint: str | None = None) -> Completion:
        """Continue ``prompt`` (already rendered, e.g. by ``prompt``, or a function that renders it on the
        model's worker) before ``deadline``, as ``complete`` does.

        ``checkpoint`` is a start of ``prompt`` that later prompts will share (chat's instructions and tool
        definitions): its evaluated state is kept (``CHECKPOINTS`` of them) and restored when another request
        used the model in between, so that it is not read again.

        ``on_text`` receives each piece of text as it is generated (on the model's worker thread); ``stop``
        is asked after every token and ends the generation when it returns True (``stopped="cancelled"``).
        ``grammar`` (GBNF text) constrains what may be written, as ``json_schema`` does.

        Raises:
            DeadlineExceeded: the deadline passed before generation could start.
            ModelError: the model failed, or it is closed.
        """
        if self._closed:
            raise self._closed_error()
        if time.monotonic() >= deadline:
            raise DeadlineExceeded("The deadline passed before the model was asked.")
        cancel = threading.Event()
        try:
            job: Future[Completion] = self._executor.submit(self._generate, prompt, deadline, max_tokens,
                                                            json_schema, temperature, cancel, check_deadline,
                                                            on_text, stop, grammar, checkpoint)
        except RuntimeError:  # the worker was shut down by a close that ran since the check above
            raise self._closed_error() from None
        try:
            return job.result(timeout=max(0.0, deadline - time.monotonic()) + 0.5)
        except FutureTimeout:
            cancel.set()
            raise DeadlineExceeded("The model did not answer before the deadline.") from None

    def _generate(self, prompt: str | Callable[[], str], deadline: float, max_tokens: int, json_schema: dict[str, Any] | None,
                  temperature: float, cancel: threading.Event, check_deadline: bool,
                  on_text: Callable[[str], None] | None, stop: Callable[[], bool] | None,
                  grammar_text: str | None = None, checkpoint: str | None = None) -> Completion:
        started = time.monotonic()
        if self._freed:  # queued before a close whose free ran first
            raise self._closed_error()
        if cancel.is_set() or started >= deadline:
            raise DeadlineExceeded("The deadline passed while the model was busy with another request.")
        if callable(prompt):
            prompt = prompt()
        grammar = None
        if json_schema is not None:
            from llama_cpp.llama_grammar import LlamaGrammar

            grammar = LlamaGrammar.from_json_schema(json.dumps(json_schema), verbose=False)
        elif grammar_text is not None:
            from llama_cpp.llama_grammar import LlamaGrammar

            grammar = LlamaGrammar.from_string(grammar_text, verbose=False)
        # Tokenized as llama-cpp-python tokenizes a text prompt, so that the reused prefix is the one it reuses.
        tokens = self.llama.tokenize(prompt.encode("utf-8"), special=True)
        prompt_tokens = len(tokens)
        if checkpoint and self.checkpoints_kept and prompt.startswith(checkpoint):
            self._from_checkpoint(checkpoint, tokens)
        kept = list(self.llama.input_ids[: self.llama.n_tokens]) if self.llama.n_tokens else []
        reused = shared_prefix(kept, tokens)
        evaluated = prompt_tokens - (reused - 1 if reused == prompt_tokens else reused)
        pieces: list[str] = []
        first: float | None = None
        stopped: Literal["stop", "length", "deadline", "cancelled"] = "length"
        asked = time.monotonic()  # reading the prompt is timed from here to the first token
        room = self.context - prompt_tokens
        if room <= 0:
            raise ModelError(f"The prompt is {prompt_tokens:,} tokens, more than the model's context of "
                             f"{self.context:,}.", title="Prompt too long")
        generated = 0
        undecoded = b""  # the bytes of a character split across tokens, until it is whole
        # Tokens are decoded one by one with their special tokens as text ([TOOL_CALLS], <|python_tag|>): a
        # model's tool calls can begin with one, and llama-cpp-python's completion API drops them.
        stream = self.llama.generate(tokens, temp=temperature, top_k=40, top_p=0.95, min_p=0.05, repeat_penalty=1.0,
                                     grammar=grammar)
        try:
            for token in stream:
                if llama_library().llama_vocab_is_eog(self.llama._model.vocab, token):
                    stopped = "stop"
                    break
                generated += 1
                undecoded += self.llama.detokenize([token], special=True)
                try:
                    piece, undecoded = undecoded.decode("utf-8"), b""
                except UnicodeDecodeError:
                    piece = "" if len(undecoded) < 4 else undecoded.decode("utf-8", "replace")
                    undecoded = undecoded if not piece else b""
                if piece:
                    pieces.append(piece)
                    if first is None:
                        first = time.monotonic() - started
                    if on_text is not None:
                        on_text(piece)
                if generated >= min(max_tokens, room):
                    break
                if check_deadline and (cancel.is_set() or time.monotonic() >= deadline):
                    stopped = "deadline"
                    break
                if stop is not None and stop():
                    stopped = "cancelled"
                    break
        except (RuntimeError, ValueError) as exc:
            raise ModelError(f"The model failed while generating: {exc}.") from exc
        finally:
            stream.close()
        ended = time.monotonic()
        seconds = ended - started
        if first is not None:
            read = first - (asked - started)
            with self._measured_lock:
                self._measured.append((evaluated, read, generated, ended - started - first))
        return Completion("".join(pieces), generated, prompt_tokens, stopped, round(seconds, 4),
                          None if first is None else round(first, 4), evaluated)

    def _from_checkpoint(self, checkpoint: str, tokens: Sequence[int]) -> None:
        """On the worker: make the model's state hold ``checkpoint``'s tokens (a start of ``tokens``) before a
        request, restoring a kept checkpoint, or evaluating them and keeping one, unless the state holds them
        already (the previous request shared them)."""
        prefix = self.llama.tokenize(checkpoint.encode("utf-8"), special=True)
        if not prefix or list(tokens[: len(prefix)]) != list(prefix) or len(prefix) >= len(tokens):
            return  # tokenized otherwise inside the prompt: no checkpoint boundary to keep
        key = tuple(prefix)
        kept = list(self.llama.input_ids[: self.llama.n_tokens]) if self.llama.n_tokens else []
        if shared_prefix(kept, prefix) == len(prefix):
            return
        state = self._checkpoints.pop(key, None)
        if state is not None:
            self.llama.load_state(state)
            self.checkpoint_restores += 1
        else:
            self.llama.reset()
            self.llama.eval(list(prefix))
            state = self.llama.save_state()
        self._checkpoints[key] = state  # the most recently used last
        while len(self._checkpoints) > self.checkpoints_kept:
            self._checkpoints.pop(next(iter(self._checkpoints)))

    def close(self) -> None:
        """Free the ``Llama`` on its worker (after the request running there, if any), then end the worker.

        Idempotent. Later ``complete`` calls, and requests still queued, raise ``ModelError``.
        """
        with self._closing:
            if self._closed:
                return
            self._closed = True
        self._executor.submit(self._free).result()
        self._executor.shutdown(wait=True)

    def _free(self) -> None:
        self._freed = True
        self.llama.close()

    def _closed_error(self) -> ModelError:
        return ModelError(f"The model {self.key[0]} is closed; ask the engine for the model again.",
                          title="Model closed")
