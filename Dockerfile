# syntax=docker/dockerfile:1
#
# agentd image: the program run from source by Deno (not a `deno compile` binary: a compiled binary
# cannot load TypeScript tool modules from disk, see docs/deploy.md), with every dependency cached
# at build time, Python 3 for Python tools, a non-root user and a volume for the SQLite file.
#
#   docker build -t agentd .
#   docker run -p 8080:8080 -v agentd-data:/data $SANDBOX agentd             # the quickstart agent
#   docker run -p 8080:8080 -v "$PWD/agent:/agent:ro" $SANDBOX agentd serve /agent/agent.hcl
#
# where SANDBOX="--security-opt seccomp=unconfined --security-opt apparmor=unconfined": Python tools
# run under bubblewrap, which needs user namespaces that Docker's default profiles forbid (without
# it agentd refuses Python tools at startup and says why; docs/tools.md#python-sandbox).
#
# Configuration is the manifest plus AGENT__* variables (docs/configuration.md); with PostgreSQL and
# Redis set AGENT__STORAGE__URL and AGENT__PUBSUB__KIND=redis / AGENT__PUBSUB__URL (docs/deploy.md).

ARG DENO_VERSION=2.9.6

# ---- build: resolve and cache every dependency once, type-check the program ----------------------
FROM denoland/deno:${DENO_VERSION} AS build
ENV DENO_DIR=/deno-dir \
    DENO_NO_UPDATE_CHECK=1
WORKDIR /app

# Dependencies first, in a layer keyed by deno.json and deno.lock only: a source change does not
# download them again. --frozen: the lockfile is the truth; a deno.json that disagrees fails here.
COPY deno.json deno.lock ./
RUN deno install --frozen

COPY main.ts ./
COPY src ./src
# Everything the program imports is now cached (checked), and the program type-checks.
RUN deno cache --frozen main.ts \
 && deno check --frozen main.ts

COPY examples ./examples

# ---- runtime -------------------------------------------------------------------------------------
FROM denoland/deno:bin-${DENO_VERSION} AS deno-bin

FROM debian:bookworm-slim AS runtime
# python3 and bubblewrap: Python tools run as `python3 -c ...` in a bwrap sandbox; tini: reaps what
# tools leave behind and forwards SIGTERM to deno (agentd then shuts down gracefully within
# shutdown_grace).
RUN apt-get update \
 && apt-get install -y --no-install-recommends bubblewrap ca-certificates python3 tini \
 && rm -rf /var/lib/apt/lists/* \
 && groupadd --system --gid 10001 agentd \
 && useradd --system --uid 10001 --gid agentd --home-dir /app --shell /usr/sbin/nologin agentd \
 && mkdir -p /data \
 && chown agentd:agentd /data

COPY --from=deno-bin /deno /usr/local/bin/deno

# Inside the container agentd listens on every interface (the manifest's host is for local runs),
# and SQLite, the default store, lives on the volume (AGENT__STORAGE__URL=postgres://... wins).
ENV DENO_DIR=/deno-dir \
    DENO_NO_UPDATE_CHECK=1 \
    DENO_NO_PROMPT=1 \
    AGENT__HTTP__HOST=0.0.0.0 \
    AGENT__STORAGE__PATH=/data/agentd.db

WORKDIR /app
# The program and its cached dependencies are read-only for the service user; Deno may write its
# code cache into DENO_DIR, so that one belongs to the user.
COPY --from=build /app/deno.json /app/deno.lock /app/main.ts ./
COPY --from=build /app/src ./src
COPY --from=build --chown=agentd:agentd /deno-dir /deno-dir
# The default manifest: the quickstart agent (echo model, a JS and a Python tool). Mount your own
# over /app/agent.hcl (and its tools), or pass another path to `serve`.
COPY --from=build /app/examples/quickstart/agent.hcl ./agent.hcl
COPY --from=build /app/examples/quickstart/tools ./tools

USER agentd
VOLUME ["/data"]
EXPOSE 8080

HEALTHCHECK --interval=15s --timeout=3s --start-period=20s --retries=3 \
  CMD deno eval --no-config "const r = await fetch('http://127.0.0.1:' + (Deno.env.get('AGENT__HTTP__PORT') || '8080') + '/healthz').catch(() => null); Deno.exit(r?.ok ? 0 : 1)"

# --cached-only and --frozen: nothing is fetched at run time; everything came with the image.
ENTRYPOINT ["tini", "--", "deno", "run", "-A", "--no-prompt", "--cached-only", "--frozen", \
            "/app/main.ts"]
CMD ["serve", "/app/agent.hcl"]
