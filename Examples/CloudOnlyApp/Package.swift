// swift-tools-version:6.2
// A cloud-only app: Gemini and OpenAI-compatible servers, no llama.cpp.
// `scripts/check-walls.sh` builds it where pkg-config finds no llama.pc, which
// is how `make test` shows that the `HybridInferenceCloud` product needs none.
import PackageDescription

let package = Package(
  name: "CloudOnlyApp",
  dependencies: [.package(name: "HybridInference", path: "../..")],
  targets: [
    .executableTarget(
      name: "CloudOnlyApp",
      dependencies: [.product(name: "HybridInferenceCloud", package: "HybridInference")]
    )
  ],
  swiftLanguageModes: [.v6]
)
