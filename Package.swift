// swift-tools-version:6.0
import PackageDescription

let package = Package(
  name: "HybridInference",
  products: [
    .library(name: "HybridInference", targets: ["HybridInference"]),
  ],
  targets: [
    .target(
      name: "HybridInference",
      path: "Sources/HybridInference"
    ),
    .executableTarget(
      name: "CloudBenchmark",
      dependencies: ["HybridInference"],
      path: "Benchmarks/CloudBenchmark"
    ),
    .testTarget(
      name: "HybridInferenceTests",
      dependencies: ["HybridInference"],
      path: "Tests/HybridInferenceTests"
    ),
  ],
  swiftLanguageModes: [.v6]
)
