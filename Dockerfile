# One image per deployable: docker build --build-arg MODULE=inventory-service|order-service|gateway [--build-arg REVISION=<commit>] .
# Stage 1 builds the module's runnable jar with the Maven wrapper (for Java 17); the last stage trains its AOT cache
# and runs it on a JDK 25 JRE as a non-root user. The development stack's one-shot commands have an image of
# their own, which no production image contains: docker build --target dev-kit --build-arg MODULE=dev-kit .
FROM eclipse-temurin:17-jdk-jammy AS build
WORKDIR /src
COPY . .
ARG MODULE
# The commit built (the context has no .git): docker build --build-arg REVISION=$(git rev-parse --short=12 HEAD).
# Each process exports it as build_info{revision}.
ARG REVISION=unknown
RUN --mount=type=cache,target=/root/.m2 ./mvnw -B -q -DskipTests -Dbuild.revision="${REVISION}" -pl "${MODULE}" -am package

# The dev kit (certs, dev-tokens, load-demo-data), as compose's one-shot services run it. The directories are
# where compose mounts the volumes they write: a new volume takes its directory's owner, so the non-root user
# can write them, and the servers (the same user) read them.
FROM eclipse-temurin:25-jre-jammy AS dev-kit
RUN useradd --system --uid 10001 --no-create-home --shell /usr/sbin/nologin app \
    && mkdir -p /ca /auth /out/gateway /out/inventory-service /out/order-service \
    && chown app /ca /auth /out/gateway /out/inventory-service /out/order-service
COPY --from=build /src/dev-kit/target/dev-kit.jar /app/dev-kit.jar
USER 10001
ENTRYPOINT ["java", "-jar", "/app/dev-kit.jar"]

# JDK 25 runs the jars built for 17: its AOT cache (JEP 483, 514, 515) starts a process faster than JDK 17's
# class-data sharing did (docs/performance-log.md#start-up-jdk-25s-aot-cache-issue-33).
FROM eclipse-temurin:25-jre-jammy
ARG MODULE
RUN useradd --system --uid 10001 --no-create-home --shell /usr/sbin/nologin app
WORKDIR /app
COPY --from=build /src/${MODULE}/target/${MODULE}.jar /app/app.jar
# The JVM options every process of ours starts with (deploy/jvm.options says why each).
COPY deploy/jvm.options /app/jvm.options
# The AOT cache: the jar's training run (train-cds: its real start on loopback, with a throwaway identity, no
# network) loads, links and runs what serving does, and at its exit the JVM writes those classes, linked, and the
# profiles of their methods. Made in this stage, by this image's JVM from this very jar: the JVM maps a cache only
# with the JVM it was made with, and otherwise starts without it (docs/operations/deploy.md#class-data-sharing).
RUN java -XX:AOTCacheOutput=/app/app.aot -jar /app/app.jar train-cds
USER 10001
# Heap sized from the container's memory limit; the services are measured at -Xmx256m.
ENV JAVA_TOOL_OPTIONS="-XX:MaxRAMPercentage=75"
# Every JVM of the image runs with the cache: the process, its one-shot commands, and (with the same flag) the
# health probes of compose. Netty allocates through sun.misc.Unsafe (deploy/jvm.options says why), which JDK 25
# allows with a four-line warning on stderr at every start, plain text among the JSON log lines; allowing it
# outright keeps the log one JSON object a line. JDK 17 does not know the option: it is here, not in jvm.options.
ENTRYPOINT ["java", "@/app/jvm.options", "--sun-misc-unsafe-memory-access=allow", "-XX:AOTCache=/app/app.aot", "-jar", "/app/app.jar"]
