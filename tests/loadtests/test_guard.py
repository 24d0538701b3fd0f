"""The load generator refuses any target that is not on this machine, and says why."""
from __future__ import annotations

import pytest

from cachegate.commands.main import main
from loadtests.loadgen.guard import loopback_base


@pytest.mark.parametrize("url, base", [
    ("http://127.0.0.1:8011", "http://127.0.0.1:8011"),
    ("http://localhost:8000/v1", "http://localhost:8000"),
    ("http://[::1]:9000/", "http://[::1]:9000"),
    ("https://LOCALHOST", "https://LOCALHOST"),
])
def test_loopback_urls_are_accepted(url, base):
    assert loopback_base(url) == base


@pytest.mark.parametrize("url", ["http://example.com", "http://10.0.0.5:8000", "http://0.0.0.0:8000",
                                 "http://127.0.0.2:8000", "http://localhost.example.com", "ftp://127.0.0.1",
                                 "127.0.0.1:8000"])
def test_anything_else_is_refused(url):
    with pytest.raises(ValueError, match="refusing"):
        loopback_base(url)


def test_the_cli_refuses_a_remote_gateway_before_sending_anything(capsys, tmp_path):
    code = main(["loadtest", "--workload", "mixed", "--url", "http://203.0.113.7:8000", "--duration", "1",
                 "--out", str(tmp_path), "--json"])
    assert code == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "loopback" in captured.err and "203.0.113.7" in captured.err
    assert not any(tmp_path.iterdir())
