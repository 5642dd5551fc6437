"""The data server of this process: chosen by a script, or opened from configuration again
once forgotten."""

from __future__ import annotations

from awlineage.storage import current_data_server, forget_data_server, use_data_server


def test_a_forgotten_data_server_is_opened_again_from_configuration(tmp_path,
                                                                      monkeypatch) -> None:
    chosen = use_data_server(str(tmp_path / "chosen"))
    assert current_data_server() is chosen
    monkeypatch.setenv("AWL_DATA_URL", str(tmp_path / "configured"))
    assert current_data_server() is chosen  # a script's choice holds
    forget_data_server()
    reopened = current_data_server()
    try:
        assert reopened is not chosen
        assert reopened.url == (tmp_path / "configured").as_uri()
    finally:
        forget_data_server()
