import CLlama
import Foundation
import XCTest

@testable import HybridInferenceCore
@testable import HybridInferenceLlama

/// Offload on a real GPU backend: the library against a llama.cpp built with
/// Vulkan (`LLAMA_GPU=vulkan scripts/setup-llama.sh`), on whatever Vulkan
/// device ggml picks, lavapipe (Mesa's Vulkan on the CPU, "llvmpipe") on a
/// machine without a GPU. `make test-gpu` builds and runs them; elsewhere,
/// `make test` included, they skip: the CPU build has no GPU to test.
final class GPUTests: XCTestCase {
  /// Set by `make test-gpu`.
  static let variable = "HYBRID_TEST_GPU"

  private static func greedy(_ tokens: Int) -> HybridGenerationOptions {
    .foundationModels(GenerationOptions(sampling: .greedy, maximumResponseTokens: tokens))
  }

  override func setUpWithError() throws {
    guard ProcessInfo.processInfo.environment[Self.variable] == "1" else {
      throw XCTSkip("GPU tests run under `make test-gpu` (\(Self.variable)=1)")
    }
  }

  /// The Vulkan device ggml offers: it must be there for the rest to mean anything.
  private func gpu() throws -> ComputeDevice {
    let devices = LocalSystemModel.computeDevices
    let device = try XCTUnwrap(
      devices.first { $0.kind.holdsLayers },
      "no GPU in \(devices.map { "\($0.name) (\($0.description))" }): on a machine without one, "
        + "lavapipe is listed with GGML_VK_VISIBLE_DEVICES (make test-gpu sets it)")
    return device
  }

  /// The build's backends are modules, loaded at start: the CPU's and Vulkan's.
  func testTheBackendModules_areLoaded_andListAVulkanDevice() throws {
    let backends = BackendModules.registered()
    XCTAssertTrue(backends.contains("Vulkan"), "\(backends)")
    XCTAssertTrue(backends.contains("CPU"), "\(backends)")
    let device = try gpu()
    XCTAssertTrue(device.name.hasPrefix("Vulkan"), device.name)
    XCTAssertFalse(device.description.isEmpty)
    XCTAssertTrue(llama_supports_gpu_offload())
    print("GPU device: \(device.name) (\(device.description)), \(device.kind), free \(device.freeMemoryBytes ?? -1)")
  }

  /// Greedy answers with every layer on the GPU are the CPU's, the same text.
  func testTheTinyModelsGreedyAnswer_onTheGPU_isTheCPUs() async throws {
    let path = try LocalTestModels.require(LocalTestModels.tinyPath)
    try await assertSameAnswers(path: path, prompts: ["Hi", "Why is the sky blue?"], tokens: 24)
  }

  /// SmolLM2's answers part from the CPU's after a dozen tokens on lavapipe
  /// (the Vulkan kernels add in another order), so its reference is
  /// llama.cpp's own server on the same device with every layer there
  /// (`-ngl 99`), and the same server on the CPU for the CPU's answers.
  func testSmolLM2sGreedyAnswers_equalLlamaServersOnTheSameBackend() async throws {
    let path = try LocalTestModels.require(LocalTestModels.defaultPath)
    let device = try gpu()
    let prompts = ["Why is the sky blue?", "Name three colours."]
    for (gpu, layers) in [(GPUOffload.layers(99), 99), (.none, 0)] {
      let model = LocalSystemModel(modelPath: path, contextSize: 512, threads: 2, gpu: gpu)
      let server = try await GPUReference.start(model: path, layers: layers)
      defer { server.stop() }
      for prompt in prompts {
        let ours = try await GenerativeModelSession(model: model, logHandler: .silent).respond(
          to: prompt, options: Self.greedy(32))
        let theirs = try await GPUReference.greedy(prompt, tokens: 32, server: server)
        XCTAssertFalse(ours.content.isEmpty)
        XCTAssertEqual(ours.content, theirs, "\(prompt), \(gpu) on \(device.name), beside llama-server -ngl \(layers)")
      }
      XCTAssertEqual(model.offload?.layers, layers == 0 ? 0 : model.offload?.totalLayers)
    }
  }

  private func assertSameAnswers(path: String, prompts: [String], tokens: Int) async throws {
    let device = try gpu()
    let onCPU = LocalSystemModel(modelPath: path, contextSize: 512, threads: 2, gpu: .none)
    let onGPU = LocalSystemModel(modelPath: path, contextSize: 512, threads: 2, gpu: .layers(99))
    for prompt in prompts {
      let cpu = try await GenerativeModelSession(model: onCPU, logHandler: .silent).respond(
        to: prompt, options: Self.greedy(tokens))
      let gpu = try await GenerativeModelSession(model: onGPU, logHandler: .silent).respond(
        to: prompt, options: Self.greedy(tokens))
      XCTAssertFalse(cpu.content.isEmpty, prompt)
      XCTAssertEqual(gpu.content, cpu.content, "\(prompt) on \(device.name) and the CPU")
    }
    let offload = try XCTUnwrap(onGPU.offload)
    XCTAssertEqual(offload.deviceName, device.name)
    XCTAssertEqual(offload.layers, offload.totalLayers, "all of them: 99 is more than the model has")
    XCTAssertEqual(onCPU.offload?.layers, 0)
  }

  /// `.layers(n)` puts n layers on the GPU, as the decision and llama.cpp's own log say.
  func testLayersN_offloadsN() async throws {
    let path = try LocalTestModels.require(LocalTestModels.tinyPath)
    let device = try gpu()
    let logs = LogRecorder()
    LocalSystemModel.setLlamaLogHandler(logs.handler)
    defer { LocalSystemModel.setLlamaLogHandler(.silent) }
    let model = LocalSystemModel(modelPath: path, contextSize: 256, threads: 2, gpu: .layers(2))
    _ = try await GenerativeModelSession(model: model, logHandler: .silent).respond(to: "Hi", options: Self.greedy(4))
    let offload = try XCTUnwrap(model.offload)
    XCTAssertEqual(offload.layers, 2)
    XCTAssertEqual(offload.deviceName, device.name)
    XCTAssertGreaterThan(offload.deviceBytes, 0)
    let messages = logs.records.map(\.message)
    XCTAssertTrue(
      messages.contains { $0.contains("offloaded 2/\(offload.totalLayers) layers to GPU") },
      "llama.cpp's own count: \(messages.filter { $0.contains("offload") })")
    XCTAssertTrue(
      messages.contains { $0.hasPrefix("GPU offload: 2 of \(offload.totalLayers) layers on \(device.name)") })
  }

  /// `.automatic` puts a small model whole on a GPU with room for it, and
  /// leaves it on the CPU when the GPU's free memory is too small.
  func testAutomatic_followsTheDevicesFreeMemory() async throws {
    let path = try LocalTestModels.require(LocalTestModels.tinyPath)
    let device = try gpu()
    let model = LocalSystemModel(modelPath: path, contextSize: 256, threads: 2, gpu: .automatic)
    _ = try await GenerativeModelSession(model: model, logHandler: .silent).respond(to: "Hi", options: Self.greedy(4))
    let offload = try XCTUnwrap(model.offload)
    if let free = device.freeMemoryBytes, free > OffloadPlan.margin + (64 << 20) {
      XCTAssertEqual(offload.layers, offload.totalLayers, "\(device.name) has \(free >> 20) MiB free")
    }

    // The same device, reported nearly full: nothing goes there, and the model answers on the CPU.
    let file = try GGUFFile.read(path: path)
    let full = ComputeDevice(
      name: device.name, description: device.description, kind: device.kind, memoryBytes: device.memoryBytes,
      freeMemoryBytes: 1 << 20)
    let devices = LocalSystemModel.computeDevices.map { $0.name == device.name ? full : $0 }
    let plan = OffloadPlan.decide(.automatic, facts: model.offloadFacts(for: file, devices: devices))
    XCTAssertEqual(plan.layers, 0, plan.reason)
    let loaded = try LlamaModel(
      path: path, file: file, options: LlamaModel.LoadOptions(gpu: .automatic, offload: plan), progress: nil)
    XCTAssertEqual(loaded.offload.deviceName, "CPU")
    XCTAssertFalse(try loaded.tokenize("Hi", addSpecial: true, parseSpecial: true).isEmpty)
  }

  /// A GPU that refuses the layers' buffer leaves the model on the CPU,
  /// answering as the CPU does. Vulkan's largest buffer is forced down to
  /// 1 KiB (`GGML_VK_FORCE_MAX_BUFFER_SIZE`, read once per process, hence
  /// the child process): llama.cpp still gives the GPU the tiny model's
  /// norms (256 bytes each), and their one buffer of 1,280 bytes is refused.
  func testARefusedAllocation_fallsBackToTheCPU() async throws {
    let path = try LocalTestModels.require(LocalTestModels.tinyPath)
    try await ChildProcess.assertPasses(self, environment: ["GGML_VK_FORCE_MAX_BUFFER_SIZE": "1024"]) {
      let device = try gpu()
      let logs = LogRecorder()
      LocalSystemModel.setLlamaLogHandler(logs.handler)
      defer { LocalSystemModel.setLlamaLogHandler(.silent) }
      let onGPU = LocalSystemModel(modelPath: path, contextSize: 256, threads: 2, gpu: .layers(99))
      let onCPU = LocalSystemModel(modelPath: path, contextSize: 256, threads: 2, gpu: .none)
      let answer = try await GenerativeModelSession(model: onGPU, logHandler: .silent).respond(
        to: "Hi", options: Self.greedy(8))
      let expected = try await GenerativeModelSession(model: onCPU, logHandler: .silent).respond(
        to: "Hi", options: Self.greedy(8))
      XCTAssertEqual(answer.content, expected.content)
      let offload = try XCTUnwrap(onGPU.offload)
      XCTAssertEqual(offload.deviceName, "CPU")
      XCTAssertEqual(offload.layers, 0)
      let warnings = logs.records.filter { $0.level == .warning && $0.category == .local }.map(\.message)
      XCTAssertTrue(
        warnings.contains { $0.contains("\(device.name) could not load") && $0.contains("loading on the CPU") },
        "\(warnings)")
    }
  }
}
