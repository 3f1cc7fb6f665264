# durable-agent worker image: runs the compiled worker (dist/, built by scripts/build.ts in the image).
#   docker build -t durable-agent-worker .
#   docker run --rm -e TEMPORAL_ADDRESS=host.docker.internal:7233 -e ANTHROPIC_API_KEY -v "$PWD:/workspace" durable-agent-worker
FROM node:20-slim

ENV NODE_ENV=production \
    npm_config_update_notifier=false \
    npm_config_fund=false \
    npm_config_audit=false

# Tools the agent's Bash tool commonly runs in a workspace (git, rg), CA certificates for HTTPS, and bubblewrap:
# Bash commands and Stop hooks run in its sandbox. It needs user namespaces, which a container's seccomp profile
# may refuse; the worker's banner says whether the sandbox is active, and without it commands run unsandboxed with
# a warning (or are refused with sandbox.failIfUnavailable).
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates git ripgrep bubblewrap \
 && rm -rf /var/lib/apt/lists/*

WORKDIR /app

# Dependencies first, for layer caching. Production dependencies include tsx (and its esbuild, which compiles dist/),
# @temporalio/worker (with its native core-bridge and the webpack/swc workflow bundler) and the Anthropic SDK; dev
# tools (vitest, eslint, typescript, @temporalio/testing) are left out. esbuild and @swc/core ship their binaries as
# per-platform optional packages. --ignore-scripts: the package's own `prepare` (the build) needs the sources, which
# are copied next; the dependencies' install scripts are run by `npm rebuild` then.
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts && npm cache clean --force

COPY . .
RUN npm rebuild && npm run build

# /state: the worker's state directory (docker-compose mounts a volume there; a new volume takes this ownership).
RUN mkdir -p /workspace /state && chown node:node /workspace /state
USER node

# node directly rather than `npm run worker`: no npm process in between, so SIGTERM from `docker stop` reaches the
# worker (which then shuts down gracefully). Same thing as `durable-agent worker`. The workflow bundle is cached in
# /state (the first start bundles, later ones reuse it while the workflow code is unchanged).
CMD ["node", "bin/durable-agent.js", "worker"]
