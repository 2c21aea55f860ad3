"""Playwright for Python driving Debian's Chromium (no browser download)."""

import os
from pathlib import Path

import pytest

CHROMIUM = "/usr/bin/chromium"
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"


def pytest_collection_modifyitems(config, items):
    if os.path.exists(CHROMIUM):
        return
    skip = pytest.mark.skip(
        reason=f"{CHROMIUM} not found: apt-get install -y chromium (.ci/run installs it)"
    )
    for item in items:
        if "tests/browser" in str(item.fspath):
            item.add_marker(skip)


@pytest.fixture(scope="session")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(
            executable_path=CHROMIUM,
            headless=True,
            args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"],
        )
        yield b
        b.close()


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1366, "height": 900})
    pg = context.new_page()
    pg.set_default_timeout(15_000)
    yield pg
    context.close()


@pytest.fixture
def agreement(demo):
    """The demo's agreement study (load_demo's second collection): layers, adjudication."""
    from evaluation.management.commands.load_demo import load_agreement_demo

    return load_agreement_demo()


@pytest.fixture
def artifacts() -> Path:
    ARTIFACTS.mkdir(exist_ok=True)
    return ARTIFACTS


def login(page, live_server, username: str, password: str) -> None:
    page.goto(f"{live_server.url}/accounts/login/")
    page.fill("input[name=username]", username)
    page.fill("input[name=password]", password)
    page.click("main button[type=submit]")  # not the menu's language buttons
