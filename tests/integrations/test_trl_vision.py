"""The TRL rollout with a vision-language model (issue 25): observation images reach the
processor as image parts of their turn and the model's ``generate`` as pixels, and the rollout's
tokens are the processor's tokens of the whole conversation. A tiny random LLaVA (CLIP vision
tower, 2-layer Qwen2) and a processor built here from the character-level test tokenizer: no
downloads, CPU only."""

from __future__ import annotations

import io
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from buildbench.harness import Env, Observation, ResetResult, StepResult, Task
from buildbench.integrations.trl import ChatTokens, Sampling, make_rollout_func

#: A Qwen-style template whose user turns may hold text and image parts (text first, as
#: ``observation_messages`` orders them).
TEMPLATE = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n"
    "{% if m['content'] is string %}{{ m['content'] }}{% else %}{% for part in m['content'] %}"
    "{% if part['type'] == 'image' %}<image>{% else %}{{ part['text'] }}{% endif %}{% endfor %}{% endif %}"
    "<|im_end|>\n{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
SIDE = 28  # CLIP input size: (28 / 14)^2 = 4 image tokens per image
RED = np.zeros((40, 30, 3), dtype=np.uint8)
RED[..., 0] = 255


def _png_blue() -> bytes:
    from PIL import Image

    buffer = io.BytesIO()
    Image.new("RGB", (32, 32), (0, 0, 255)).save(buffer, format="PNG")
    return buffer.getvalue()


@pytest.fixture(scope="module")
def vlm(tmp_path_factory: pytest.TempPathFactory, make_tiny_lm: Callable[..., Any]) -> tuple[Any, Any]:
    """A LLaVA processor and a random LLaVA model over the tiny character-level tokenizer."""
    tok = make_tiny_lm(tmp_path_factory.mktemp("tiny_vlm"))
    torch = pytest.importorskip("torch")
    pytest.importorskip("PIL", reason="a vision processor needs Pillow")
    from transformers import (
        CLIPImageProcessor,
        CLIPVisionConfig,
        LlavaConfig,
        LlavaForConditionalGeneration,
        LlavaProcessor,
        Qwen2Config,
    )

    tok.add_special_tokens({"additional_special_tokens": ["<image>"]})
    images = CLIPImageProcessor(size={"shortest_edge": SIDE}, crop_size={"height": SIDE, "width": SIDE})
    processor = LlavaProcessor(image_processor=images, tokenizer=tok, patch_size=14, chat_template=TEMPLATE,
                               vision_feature_select_strategy="default", num_additional_image_tokens=1)
    config = LlavaConfig(
        text_config=Qwen2Config(vocab_size=len(tok), hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                                num_attention_heads=2, num_key_value_heads=1, max_position_embeddings=4096,
                                pad_token_id=0, eos_token_id=1),
        vision_config=CLIPVisionConfig(hidden_size=32, intermediate_size=64, num_hidden_layers=1,
                                       num_attention_heads=2, image_size=SIDE, patch_size=14),
        image_token_index=processor.image_token_id, vision_feature_select_strategy="default", vision_feature_layer=-1)
    torch.manual_seed(0)
    return processor, LlavaForConditionalGeneration(config).eval()


@pytest.fixture(scope="module")
def gemma(tmp_path_factory: pytest.TempPathFactory, make_tiny_lm: Callable[..., Any]) -> tuple[Any, Any]:
    """A Gemma 3 processor and random model: its image tokens carry per-token ``token_type_ids``
    and its template's placeholder (``<start_of_image>``) expands to other tokens."""
    tok = make_tiny_lm(tmp_path_factory.mktemp("tiny_gemma"))
    torch = pytest.importorskip("torch")
    pytest.importorskip("PIL", reason="a vision processor needs Pillow")
    from transformers import (
        Gemma3Config,
        Gemma3ForConditionalGeneration,
        Gemma3ImageProcessor,
        Gemma3Processor,
        Gemma3TextConfig,
        SiglipVisionConfig,
    )

    names = {"boi": "<start_of_image>", "image": "<image_soft_token>", "eoi": "<end_of_image>"}
    tok.add_special_tokens({"additional_special_tokens": list(names.values())})
    for name, token in names.items():  # what Gemma's own tokenizer names
        setattr(tok, f"{name}_token", token)
        setattr(tok, f"{name}_token_id", tok.convert_tokens_to_ids(token))
    template = TEMPLATE.replace("<image>", "<start_of_image>")
    processor = Gemma3Processor(image_processor=Gemma3ImageProcessor(size={"height": SIDE, "width": SIDE}),
                                tokenizer=tok, chat_template=template, image_seq_length=4)
    config = Gemma3Config(
        text_config=Gemma3TextConfig(vocab_size=len(tok), hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                                     num_attention_heads=2, num_key_value_heads=1, head_dim=16, sliding_window=64,
                                     max_position_embeddings=4096, pad_token_id=0, eos_token_id=1),
        vision_config=SiglipVisionConfig(hidden_size=32, intermediate_size=64, num_hidden_layers=1,
                                         num_attention_heads=2, image_size=SIDE, patch_size=14),
        mm_tokens_per_image=4, boi_token_index=tok.boi_token_id, eoi_token_index=tok.eoi_token_id,
        image_token_index=tok.image_token_id)
    torch.manual_seed(0)
    return processor, Gemma3ForConditionalGeneration(config).eval()


class _RenderEnv(Env):
    """Two turns whose observations carry renders: an array at reset, PNG bytes after the first reply."""

    def reset(self, task: Task, *, seed: int | None = None) -> ResetResult:
        self.steps = 0
        return ResetResult(Observation(text="Room 1.", images=[RED]), {})

    def step(self, action: Any) -> StepResult:
        self.steps += 1
        return StepResult(Observation(text="Rendered.", images=[_png_blue()]), 0.5, self.steps == 2, False, {})

    def outcome(self) -> dict[str, Any]:
        return {}


@contextmanager
def _forwards(model: Any, image_token: int) -> Iterator[list[tuple[int, bool]]]:
    """Each forward pass of ``model``: its image placeholders and whether it got image inputs."""
    seen: list[tuple[int, bool]] = []

    def hook(module: Any, args: Any, kwargs: dict[str, Any]) -> None:
        ids = kwargs.get("input_ids", args[0] if args else None)
        has_images = kwargs.get("pixel_values") is not None or bool(kwargs.get("mm_encoder_outputs"))
        seen.append((0 if ids is None else int((ids == image_token).sum()), has_images))

    handle = model.register_forward_pre_hook(hook, with_kwargs=True)
    try:
        yield seen
    finally:
        handle.remove()


class _Trainer:
    """What a rollout_func reads of a GRPOTrainer, with ``generate`` recorded."""

    def __init__(self, processor: Any, model: Any) -> None:
        self.processing_class = processor
        self.model = model
        self.accelerator = self
        self.calls: list[dict[str, Any]] = []
        generate = model.generate

        def recorded(*args: Any, **kwargs: Any) -> Any:
            self.calls.append(kwargs)
            return generate(*args, **kwargs)

        model.generate = recorded

    def unwrap_model(self, model: Any) -> Any:
        return model


def test_chunks_are_the_processors_tokens_of_the_conversation(vlm: tuple[Any, Any]) -> None:
    processor, _ = vlm
    tok = processor.tokenizer
    chat = ChatTokens(processor, "Design rooms.")
    prompt = chat.start("Room 1.", [RED])
    reply = "place bed"
    reply_ids = tok(reply, add_special_tokens=False)["input_ids"]
    answer = chat.answer(reply, reply_ids, "Rendered.", [_png_blue()])
    whole = processor(text=[chat.text], images=chat.images, add_special_tokens=False)["input_ids"][0]
    assert prompt + reply_ids + answer == list(whole)
    assert prompt.count(processor.image_token_id) == 4 and answer.count(processor.image_token_id) == 4
    assert [np.asarray(im).tolist()[0][0] for im in chat.images] == [[255, 0, 0], [0, 0, 255]]
    pixels = chat.model_inputs()["pixel_values"]
    assert pixels.shape == (2, 3, SIDE, SIDE)
    assert np.allclose(pixels.numpy(), processor.image_processor(chat.images, return_tensors="np")["pixel_values"])


def test_a_rollout_shows_each_observations_images_to_the_model(vlm: tuple[Any, Any]) -> None:
    processor, model = vlm
    trainer = _Trainer(processor, model)
    rollout = make_rollout_func(lambda task: _RenderEnv(), lambda prompt, k: Task(id="room", suite="test", inputs={}),
                                sampling=Sampling(max_turns=3, max_new_tokens=5, system_prompt="Design rooms."))
    with _forwards(model, processor.image_token_id) as forwards:
        out = rollout(["room"], trainer)
    # the prefill of each reply encodes the images of its placeholders (transformers pre-encodes pixels)
    assert [(tokens, images) for tokens, images in forwards if tokens] == [(4, True), (8, True)]
    image = processor.image_token_id
    prompt, completion, mask = out["prompt_ids"][0], out["completion_ids"][0], out["env_mask"][0]
    assert prompt.count(image) == 4
    assert [t for t, m in zip(completion, mask, strict=True) if m == 0].count(image) == 4
    assert image not in [t for t, m in zip(completion, mask, strict=True) if m == 1]  # never generated
    assert len(completion) == len(mask) == len(out["logprobs"][0])
    # the first reply sees the reset render, the second both renders: pixels for every placeholder
    assert [call["pixel_values"].shape[0] for call in trainer.calls] == [1, 2]
    assert [np.asarray(im).tolist()[0][0] for im in out["episode_images"][0]] == [[255, 0, 0], [0, 0, 255]]
    assert out["episode_reward"] == [1.0]


def test_a_tokenizer_refuses_images_it_cannot_show(tmp_path: Path, make_tiny_lm: Callable[..., Any]) -> None:
    tok = make_tiny_lm(tmp_path)
    chat = ChatTokens(tok)
    with pytest.raises(ValueError, match="processor"):
        chat.start("Room 1.", [RED])


def test_a_multimodal_dataset_prompt_names_its_task_by_its_text() -> None:
    """TRL hands a rollout_func prompts whose content is a list of parts when the dataset has images."""
    from buildbench.integrations.trl import prompt_text

    parts = [{"type": "image", "image": None}, {"type": "text", "text": "bedroom_"}, {"type": "text", "text": "095"}]
    assert prompt_text([{"role": "user", "content": parts}]) == "bedroom_095"


@pytest.mark.slow
def test_grpo_trains_a_vision_model_through_the_rollout(vlm: tuple[Any, Any], tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """One GRPO step; TRL 1.16 scores the rollout's image tokens without pixels (see the module docs)."""
    trl = pytest.importorskip("trl", reason="training is an extra: trl is not installed")
    datasets = pytest.importorskip("datasets", reason="training is an extra: datasets is not installed")
    from buildbench.integrations.trl import episode_reward

    monkeypatch.setenv("TRL_EXPERIMENTAL_SILENCE", "1")
    processor, model = vlm
    fresh = type(model)(model.config)  # training changes weights: leave the module's model as it is
    args = trl.GRPOConfig(output_dir=str(tmp_path / "out"), per_device_train_batch_size=2, num_generations=2,
                          max_completion_length=1024, max_steps=1, learning_rate=1e-3, logging_steps=1,
                          report_to="none", use_cpu=True, save_strategy="no", beta=0.0, seed=0, bf16=False)
    rollout = make_rollout_func(lambda task: _RenderEnv(), lambda prompt, k: Task(id="room", suite="test", inputs={}),
                                sampling=Sampling(max_turns=3, max_new_tokens=5))
    trainer = trl.GRPOTrainer(model=fresh, reward_funcs=[episode_reward], args=args, processing_class=processor,
                              train_dataset=datasets.Dataset.from_list([{"prompt": "0"}, {"prompt": "1"}]),
                              rollout_func=rollout)
    with _forwards(fresh, processor.image_token_id) as forwards:
        assert trainer.train().global_step == 1
    assert [h["reward"] for h in trainer.state.log_history if "reward" in h] == [1.0]
    assert (4, True) in forwards and (8, True) in forwards  # each episode's replies saw their renders


def test_per_token_image_inputs_span_the_whole_conversation(gemma: tuple[Any, Any]) -> None:
    """Gemma 3 marks its image tokens in ``token_type_ids``: the rollout keeps them aligned with the
    conversation's tokens (0 for replies and text), and never samples an image token."""
    processor, model = gemma
    tok = processor.tokenizer
    chat = ChatTokens(processor)
    prompt = chat.start("Room 1.", [RED])
    reply_ids = tok("place bed", add_special_tokens=False)["input_ids"]
    answer = chat.answer("place bed", reply_ids, "Rendered.", [_png_blue()])
    whole = processor(text=[chat.text], images=chat.images, add_special_tokens=False, return_tensors="pt")
    assert prompt + reply_ids + answer == whole["input_ids"][0].tolist()
    assert chat.model_inputs()["token_type_ids"].tolist() == whole["token_type_ids"].tolist()
    assert set(chat.placeholder_ids) == {tok.boi_token_id, tok.image_token_id}

    rollout = make_rollout_func(lambda task: _RenderEnv(), lambda prompt, k: Task(id="room", suite="test", inputs={}),
                                sampling=Sampling(max_turns=3, max_new_tokens=5))
    with _forwards(model, tok.image_token_id) as forwards:
        out = rollout(["room"], _Trainer(processor, model))
    assert [(tokens, images) for tokens, images in forwards if tokens] == [(4, True), (8, True)]
    generated = [t for t, m in zip(out["completion_ids"][0], out["env_mask"][0], strict=True) if m == 1]
    assert not set(generated) & {tok.boi_token_id, tok.image_token_id}


def test_a_dreamhouse_episode_shows_its_target_views(vlm: tuple[Any, Any]) -> None:
    """A suite whose observations have images: DreamHouse's reset carries the five target views."""
    from buildbench.integrations.trl import suite_rollout_func

    processor, model = vlm
    rollout = suite_rollout_func("dreamhouse", split="demo", sampling=Sampling(max_turns=1, max_new_tokens=4))
    out = rollout(["0"], _Trainer(processor, model))
    assert out["prompt_ids"][0].count(processor.image_token_id) == 5 * 4
    assert len(out["episode_images"][0]) == 5
    assert out["episode_reward"][0] is not None
