# The descent engine in two images; both run `descent play` (a game protocol on
# stdin/stdout by default, MQTT with --transport mqtt):
#
#   docker build -t descent:cpu .                  # python:3.11-slim + ONNX Runtime (default)
#   docker build --target gpu -t descent:gpu .     # NVIDIA TensorRT image + the tensorrt extra
#
#   docker run -i --rm descent:cpu --game "hex(size=11)"                 # GTP on stdio
#   docker run -i --rm descent:cpu --game dicechess                      # UCI on stdio
#   docker run --rm --network host descent:cpu --game einstein \
#       --transport mqtt --broker 127.0.0.1:1883 --engine-id ewn-1      # over MQTT
#   docker run -i --rm --gpus all -v descent-cache:/home/descent/.cache descent:gpu \
#       --game "hex(size=13)" --backend tensorrt        # (the volume keeps built engines)
#
# Versions are pinned here (the pins tested with this tree) and by the base image tags;
# pyproject.toml gives the ranges. Neither image needs PyTorch at run time (training does:
# the `torch` extra).

ARG PYTHON_IMAGE=python:3.11.13-slim-bookworm
# NGC's TensorRT image (TensorRT 11 Python bindings, CUDA 13, Ubuntu 24.04, Python 3.12)
ARG TENSORRT_IMAGE=nvcr.io/nvidia/tensorrt:26.10-py3

# ---- pins ------------------------------------------------------------------------------
# The CPU image pins everything it installs. The GPU image leaves onnx and ONNX Runtime to
# the tensorrt extra: NVIDIA Model Optimizer pins its own (onnx~=1.21, onnxruntime-gpu), and
# it needs torch, pinned here as for training.
FROM ${PYTHON_IMAGE} AS constraints
ARG PIP_VERSION=26.3
ARG SETUPTOOLS_VERSION=84.2.1
ARG WHEEL_VERSION=0.48.0
ARG CYTHON_VERSION=3.3.1
ARG NUMPY_VERSION=2.4.6
ARG STRUCTLOG_VERSION=26.1.0
ARG AIOMQTT_VERSION=2.5.1
ARG PAHO_MQTT_VERSION=2.2.0
ARG ONNX_VERSION=1.23.2
ARG ONNXRUNTIME_VERSION=1.32.0
ARG SAFETENSORS_VERSION=0.8.0
ARG MODELOPT_VERSION=0.47.0
ARG CUDA_PYTHON_VERSION=13.4.4
ARG TORCH_VERSION=2.13.0
RUN printf '%s\n' \
        "pip==${PIP_VERSION}" "setuptools==${SETUPTOOLS_VERSION}" "wheel==${WHEEL_VERSION}" \
        "cython==${CYTHON_VERSION}" "numpy==${NUMPY_VERSION}" \
        "structlog==${STRUCTLOG_VERSION}" "aiomqtt==${AIOMQTT_VERSION}" \
        "paho-mqtt==${PAHO_MQTT_VERSION}" "safetensors==${SAFETENSORS_VERSION}" \
        > /constraints-common.txt \
    && { cat /constraints-common.txt; \
         printf '%s\n' "onnx==${ONNX_VERSION}" "onnxruntime==${ONNXRUNTIME_VERSION}"; } \
        > /constraints-cpu.txt \
    && { cat /constraints-common.txt; \
         printf '%s\n' "nvidia-modelopt==${MODELOPT_VERSION}" \
                        "cuda-python==${CUDA_PYTHON_VERSION}" "torch==${TORCH_VERSION}"; } \
        > /constraints-gpu.txt

# ---- build: the wheel, with the Cython extensions compiled --------------------------------
FROM ${PYTHON_IMAGE} AS build
# Debian's security updates replace exact package versions: the base image tag pins the
# release, so the compiler is not pinned further.
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends gcc libc6-dev \
    && rm -rf /var/lib/apt/lists/*
COPY --from=constraints /constraints-cpu.txt /constraints.txt
# PIP_CONSTRAINT also holds pip's isolated build environment (setuptools, Cython, numpy)
ENV PIP_CONSTRAINT=/constraints.txt PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1
WORKDIR /src
COPY . .
RUN pip wheel --no-deps --wheel-dir /wheels .

# ---- gpu: TensorRT (and ONNX Runtime) on an NVIDIA GPU ----------------------------------
FROM ${TENSORRT_IMAGE} AS gpu
SHELL ["/bin/bash", "-o", "pipefail", "-c"]
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends gcc python3-dev python3-venv \
    && rm -rf /var/lib/apt/lists/*
# a venv that still sees the image's own TensorRT Python bindings
RUN python3 -m venv --system-site-packages /opt/descent
ENV PATH=/opt/descent/bin:$PATH \
    PIP_CONSTRAINT=/constraints.txt PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PYTHONUNBUFFERED=1
COPY --from=constraints /constraints-gpu.txt /constraints.txt
WORKDIR /src
COPY . .
# The local tree with its extra; versions from PIP_CONSTRAINT, TensorRT from the base image.
# Model Optimizer brings onnxruntime-gpu, which installs the same `onnxruntime` module as
# the CPU onnxruntime of our base dependencies: keep the GPU build, whole.
# hadolint ignore=DL3013
RUN pip install ".[tensorrt]" \
    && if pip show onnxruntime-gpu > /dev/null 2>&1; then \
           ort_gpu="$(pip show onnxruntime-gpu | sed -n 's/^Version: //p')" \
           && pip uninstall -y onnxruntime \
           && pip install --no-deps --force-reinstall "onnxruntime-gpu==${ort_gpu}"; \
       fi \
    && rm -rf /src \
    && useradd --create-home --uid 1001 descent \
    && mkdir -p /home/descent/.cache/descent \
    && chown -R descent:descent /home/descent/.cache
USER 1001
WORKDIR /home/descent
ENTRYPOINT ["descent", "play"]
CMD []

# ---- cpu: ONNX Runtime on the CPU (the last stage: `docker build .` builds this one) -------
FROM ${PYTHON_IMAGE} AS cpu
COPY --from=constraints /constraints-cpu.txt /constraints.txt
COPY --from=build /wheels /wheels
ENV PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1 PYTHONUNBUFFERED=1
RUN pip install --constraint /constraints.txt /wheels/*.whl \
    && rm -rf /wheels \
    && useradd --create-home --uid 1000 descent \
    && mkdir -p /home/descent/.cache/descent \
    && chown -R descent:descent /home/descent/.cache
USER 1000
WORKDIR /home/descent
ENTRYPOINT ["descent", "play"]
CMD []
