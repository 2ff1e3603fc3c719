# toolbelt as a container: `toolbelt mcp --http` serving a team (see README.md, "Serving a
# team", and deploy/kubernetes/). Two stages: a release build, then a slim Debian image with
# what commands need (bash, git, coreutils), a non-root user, and tini as PID 1 so that
# processes orphaned by commands are reaped and SIGTERM reaches toolbelt, which drains.
#
#   docker build -t toolbelt .
#   docker run --rm -p 8080:8080 -e TOOLBELT_TOKEN=… toolbelt
#
# The sandbox works inside it without added capabilities: Landlock and seccomp need none, and
# the mount namespace that keeps protected paths read-only is made in a user namespace, which
# the container runtime's default seccomp profile refuses; run it with that profile off
# (`--security-opt seccomp=unconfined`; in Kubernetes `seccompProfile: Unconfined`, as
# deploy/kubernetes/deployment.yaml does) on a node that allows unprivileged user namespaces.
# toolbelt puts its own seccomp filter on every command it runs. `toolbelt sandbox check`
# inside the container says what holds.

FROM rust:1.95-slim-trixie AS build
# Debian's packages are not pinned: the image takes the release's security updates when rebuilt.
# hadolint ignore=DL3008
RUN apt-get update \
 && apt-get install -y --no-install-recommends g++ make pkg-config \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . .
RUN cargo build --release --locked -p toolbelt \
 && install -m 0755 target/release/toolbelt /usr/local/bin/toolbelt

FROM debian:trixie-slim
# hadolint ignore=DL3008
RUN apt-get update \
 && apt-get install -y --no-install-recommends bash ca-certificates git procps tini \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --uid 10001 --user-group --create-home --home-dir /home/toolbelt --shell /bin/bash toolbelt \
 && mkdir -p /workspace \
 && chown toolbelt:toolbelt /workspace
COPY --from=build /usr/local/bin/toolbelt /usr/local/bin/toolbelt
USER 10001:10001
ENV HOME=/home/toolbelt
WORKDIR /workspace
EXPOSE 8080
STOPSIGNAL SIGTERM
ENTRYPOINT ["/usr/bin/tini", "--", "/usr/local/bin/toolbelt"]
CMD ["mcp", "--http", "0.0.0.0:8080", "--token-env", "TOOLBELT_TOKEN"]
