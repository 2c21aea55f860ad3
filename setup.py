"""Builds the optional C accelerator of the scorer's file reader; everything else is in
pyproject.toml.  If no C compiler is available the install still succeeds and the pure
Python/pandas reader is used."""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "evaluation.metrics._fastparse",
            ["evaluation/metrics/_fastparse.c"],
            optional=True,
            extra_compile_args=["-O2"],
        )
    ]
)
