"""Where the tests' own files are, for test modules at any depth under tests/."""

from pathlib import Path

TESTS = Path(__file__).parent
FIXTURES_ROOT = TESTS / "fixtures"  # our own minimal pages and files (never realdata)
REPO = TESTS.parent
