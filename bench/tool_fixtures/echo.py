"""A Python tool that returns its arguments: what bench/tools.ts times is the runner."""


def echo(args, ctx):
    """Returns its arguments."""
    return args


def big(args, ctx):
    """Returns a string of `mb` MiB (refused at limits.result_bytes)."""
    return "x" * (args["mb"] * 1024 * 1024)


def flood(args, ctx):
    """Emits `count` events until limits.emits stops it; returns how many went out."""
    sent = 0
    try:
        for i in range(args["count"]):
            ctx.emit("n", i)
            sent += 1
    except RuntimeError:
        pass
    return sent
