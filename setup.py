"""Shim so that older pip versions can install in editable mode; metadata lives in setup.cfg."""

from setuptools import setup

setup()
