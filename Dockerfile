# payouts: batch payouts from spreadsheets.
#   docker build -t payouts .
#   docker run --rm payouts --help
# The image's entry point is the CLI (`node bin/payouts.js`); the command is the subcommand, e.g.
# `docker run ... payouts worker`. See docker-compose.yml for the whole stack.

# ---- build: install all dependencies, compile TypeScript, then drop the dev dependencies ----------
FROM node:20-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
# The workspace's manifest too: npm ci links the sandbox package (packages/sandbox) into node_modules.
COPY packages/sandbox/package.json ./packages/sandbox/package.json
# --ignore-scripts: `prepare` would build before the sources are copied; the build runs below.
RUN npm ci --ignore-scripts --no-audit --no-fund
# The sources (what .dockerignore lets through: no tests, no local data, no node_modules).
COPY . .
RUN npm run build && npm prune --omit=dev --ignore-scripts --no-audit --no-fund

# ---- runtime: compiled code, production dependencies, templates and samples only -----------------
FROM node:20-slim
ENV NODE_ENV=production \
    DATA_DIR=/data
WORKDIR /app
COPY --from=build /app/package.json ./package.json
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
# The sandbox package (node_modules/@payouts/sandbox links to it): its manifest and compiled code.
COPY --from=build /app/packages/sandbox/package.json ./packages/sandbox/package.json
COPY --from=build /app/packages/sandbox/dist ./packages/sandbox/dist
COPY bin ./bin
# The sandbox reads its seed from samples/, `payouts demo` submits samples/ by default.
COPY samples ./samples
COPY templates ./templates
# DATA_DIR (inbox/ processing/ archive/ rejected/ outbox/) is a volume owned by the unprivileged user.
RUN mkdir -p /data && chown node:node /data
VOLUME ["/data"]
USER node
ENTRYPOINT ["node", "bin/payouts.js"]
CMD ["--help"]
