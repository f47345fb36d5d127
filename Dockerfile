# The lab-runner image, from scratch: no base image is pulled from any registry.
#
# Build it with `scripts/build-image.sh` (it stages the root filesystem this file copies:
# lab-runner with exactly the shared libraries it links, kubectl 1.33, busybox, /tmp, a HOME).
#   docker run --rm lab-runner:dev demo stuck-rollout                 # a lab end to end
#   docker run -d -p 127.0.0.1:6443:6443 -v lab-sim:/var/lib/lab-runner lab-runner:dev
#                                                                     # a simulated cluster
#   docker exec CONTAINER lab-runner sim kubeconfig --server https://127.0.0.1:6443 > kubeconfig
FROM scratch
COPY rootfs/ /
# Busybox provides sh and the utilities the labs' solutions use (grep, sed, cut, head, timeout…).
RUN ["/bin/busybox", "--install", "-s", "/bin"]
ENV PATH=/bin HOME=/root TMPDIR=/tmp LAB_RUNNER_SIM_DIR=/var/lib/lab-runner/sim
WORKDIR /root
EXPOSE 6443
ENTRYPOINT ["/bin/lab-runner"]
# Without arguments: the simulator for clients outside the container, state on
# /var/lib/lab-runner (mount a volume there to keep the cluster across container restarts).
CMD ["sim", "serve", "--listen", "0.0.0.0:6443"]
