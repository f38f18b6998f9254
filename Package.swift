// swift-tools-version:6.0
import PackageDescription

let package = Package(
  name: "HybridInference",
  products: [
    .library(name: "HybridInference", targets: ["HybridInference"]),
    .executable(name: "hybrid-chat", targets: ["hybrid-chat"]),
  ],
  targets: [
    // llama.cpp's C API, found through pkg-config (`llama.pc`): a distribution
    // package, Homebrew, or the prefix that `make setup` builds.
    .systemLibrary(
      name: "CLlama",
      path: "Sources/CLlama",
      pkgConfig: "llama",
      providers: [.apt(["libllama-dev"]), .brew(["llama.cpp"])]
    ),
    .target(
      name: "HybridInference",
      dependencies: ["CLlama"],
      path: "Sources/HybridInference"
    ),
    .executableTarget(
      name: "local-benchmark",
      dependencies: ["HybridInference", "CLlama", "OpenAIServers"],
      path: "Benchmarks/LocalBenchmark"
    ),
    .executableTarget(
      name: "cloud-benchmark",
      dependencies: ["HybridInference", "GeminiServerProcess", "OpenAIServers"],
      path: "Benchmarks/CloudBenchmark"
    ),
    // The `hybrid-chat` demo: the executable holds the I/O (terminal, chat
    // loop); HybridChatCore holds what can be unit-tested without a process
    // (argument parsing, option mapping, output formatting).
    .target(
      name: "HybridChatCore",
      dependencies: ["HybridInference"],
      path: "Sources/HybridChatCore"
    ),
    .executableTarget(
      name: "hybrid-chat",
      dependencies: ["HybridInference", "HybridChatCore"],
      path: "Sources/HybridChat"
    ),
    .testTarget(
      name: "HybridChatTests",
      dependencies: ["HybridChatCore", "HybridInference", "GeminiServerProcess", "TestPrerequisites"],
      path: "Tests/HybridChatTests"
    ),
    // Starts the loopback Gemini server for tests and the cloud benchmark.
    .target(
      name: "GeminiServerProcess",
      path: "Tests/GeminiServerProcess"
    ),
    // Starts llama.cpp's llama-server for the OpenAI-compatible tests and benchmark.
    .target(
      name: "OpenAIServers",
      path: "Tests/OpenAIServers"
    ),
    // Fails a test whose prerequisite is missing under CI or `make test`, skips it elsewhere.
    .target(
      name: "TestPrerequisites",
      path: "Tests/TestPrerequisites"
    ),
    .testTarget(
      name: "HybridInferenceTests",
      dependencies: ["HybridInference", "GeminiServerProcess", "OpenAIServers", "TestPrerequisites"],
      path: "Tests/HybridInferenceTests"
    ),
  ],
  swiftLanguageModes: [.v6]
)
