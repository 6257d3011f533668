# One image per deployable: docker build --build-arg MODULE=inventory-service|order-service|gateway .
# Stage 1 builds the module's runnable jar with the Maven wrapper; stage 2 trains its class-data-sharing archive
# and runs it on a JRE as a non-root user.
FROM eclipse-temurin:17-jdk-jammy AS build
WORKDIR /src
COPY . .
ARG MODULE
RUN --mount=type=cache,target=/root/.m2 ./mvnw -B -q -DskipTests -pl "${MODULE}" -am package

FROM eclipse-temurin:17-jre-jammy
ARG MODULE
# /certs and /auth are where compose mounts the certificates and dev-auth volumes: a new volume takes its
# directory's owner, so the non-root user can write them (the one-shot certs and dev-tokens) and read them.
RUN useradd --system --uid 10001 --no-create-home --shell /usr/sbin/nologin app \
    && mkdir /certs && chown app /certs && mkdir /auth && chown app /auth
WORKDIR /app
COPY --from=build /src/${MODULE}/target/${MODULE}.jar /app/app.jar
# The class-data-sharing archive: the jar's training run (train-cds: its real start on loopback, with a
# throwaway identity, no network) loads what serving loads, and the JVM writes those classes out at exit.
# Made in this stage, by this image's JVM from this very jar: the JVM maps an archive only with the JVM and
# jar it was made with, and otherwise starts without it (docs/operations.md#class-data-sharing).
RUN java -XX:ArchiveClassesAtExit=/app/app.jsa -jar /app/app.jar train-cds
USER 10001
# Heap sized from the container's memory limit; the services are measured at -Xmx256m.
ENV JAVA_TOOL_OPTIONS="-XX:MaxRAMPercentage=75"
# Every JVM of the image runs with the archive: the process, its one-shot commands, and (with the same flags)
# the health probes of compose and Kubernetes.
ENTRYPOINT ["java", "-XX:SharedArchiveFile=/app/app.jsa", "-Xshare:auto", "-jar", "/app/app.jar"]
