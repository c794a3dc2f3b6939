"""Settings: defaults < TOML < environment < flags, with clear errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from descent.engine.settings import Settings, load_settings, settings_help


def test_precedence(tmp_path: Path) -> None:
    cfg = tmp_path / "engine.toml"
    cfg.write_text('hash_mb = 32\nseed = 5\nstrength = "casual"\n')
    s = load_settings({"seed": "9"}, str(cfg), environ={"DESCENT_HASH_MB": "48"})
    assert (s.hash_mb, s.seed, s.strength) == (48, 9, "casual")
    assert load_settings(environ={}) == Settings()


def test_descent_table_in_toml(tmp_path: Path) -> None:
    cfg = tmp_path / "engine.toml"
    cfg.write_text('[descent]\ngame = "einstein"\nmqtt-tls = true\n')
    s = load_settings(None, str(cfg), environ={})
    assert s.game == "einstein" and s.mqtt_tls is True


@pytest.mark.parametrize("text,message", [
    ("nonsense = 1\n", "unknown setting 'nonsense'"),
    ("hash_mb = 'lots'\n", "hash_mb: expected int"),
    ("hash_mb = \n", "config file"),
])
def test_bad_config_files_name_the_problem(tmp_path: Path, text: str, message: str) -> None:
    cfg = tmp_path / "bad.toml"
    cfg.write_text(text)
    with pytest.raises(ValueError, match=message):
        load_settings(None, str(cfg), environ={})


def test_bad_values() -> None:
    with pytest.raises(ValueError, match="hash_mb"):
        load_settings({"hash_mb": "0"}, environ={})
    with pytest.raises(ValueError, match="true/false"):
        load_settings({"mqtt_tls": "maybe"}, environ={})
    with pytest.raises(ValueError, match="cannot read"):
        load_settings(None, "/nonexistent/x.toml", environ={})


def test_every_setting_is_documented() -> None:
    assert all(help_text for _, help_text, _ in settings_help())


def test_the_options_page_is_current() -> None:
    from tests.helpers.gen_options_doc import PATH, render

    assert PATH.read_text(encoding="utf-8") == render(), \
        "docs/options.md is stale: run python -m tests.helpers.gen_options_doc"
