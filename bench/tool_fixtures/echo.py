"""A Python tool that returns its arguments: what bench/tools.ts times is the runner."""


def echo(args, ctx):
    """Returns its arguments."""
    return args
