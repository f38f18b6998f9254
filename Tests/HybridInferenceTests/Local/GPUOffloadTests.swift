import CLlama
import Foundation
import XCTest

@testable import HybridInferenceCore
@testable import HybridInferenceLlama

/// `gpu:` and `computeDevices` against the linked llama.cpp (a CPU-only
/// build here) and the tiny model; the decision itself is `OffloadPlanTests`'.
final class GPUOffloadTests: XCTestCase {
  private let brief = HybridGenerationOptions.foundationModels(
    GenerationOptions(sampling: .greedy, maximumResponseTokens: 2))

  func testComputeDevices_listTheCPU_consistently() throws {
    let devices = LocalSystemModel.computeDevices
    let cpu = try XCTUnwrap(devices.first { $0.kind == .cpu }, "the CPU backend is always linked: \(devices)")
    XCTAssertFalse(cpu.name.isEmpty)
    XCTAssertEqual(Set(devices.map(\.name)).count, devices.count, "names are the registry's handles")
    for device in devices {
      if let total = device.memoryBytes, let free = device.freeMemoryBytes {
        XCTAssertGreaterThan(total, 0, device.name)
        XCTAssertLessThanOrEqual(free, total, device.name)
      } else {
        XCTAssertNil(device.memoryBytes, "both sizes or neither: \(device.name)")
      }
    }
    XCTAssertEqual(LocalSystemModel.computeDevices.map(\.name), devices.map(\.name), "the same list each time")
    // This machine's llama.cpp says whether it offloads; the registry agrees.
    XCTAssertEqual(devices.contains { $0.kind.holdsLayers }, llama_supports_gpu_offload())
  }

  /// Backends already registered at start (linked in, or modules that
  /// `llama_backend_init` found) are not loaded a second time.
  func testBackendModules_loadNothingMore_onceTheRegistryHasBackends() {
    _ = LocalSystemModel.computeDevices
    let before = BackendModules.registered()
    XCTAssertTrue(before.contains("CPU"), "\(before)")
    XCTAssertNil(BackendModules.loadIfNone())
    XCTAssertEqual(BackendModules.registered(), before)
  }

  func testNegativeLayers_areInvalidOptions() async throws {
    let model = LocalSystemModel(
      modelPath: try LocalTestModels.require(LocalTestModels.tinyPath), contextSize: 256, threads: 2,
      gpu: .layers(-1))
    do {
      try await model.prepare()
      XCTFail("a negative layer count must be refused")
    } catch HybridInferenceError.invalidOptions(let why) {
      XCTAssertTrue(why.contains("LocalSystemModel.gpu"), why)
      XCTAssertTrue(why.contains("-1"), why)
    }
    do {
      _ = try await GenerativeModelSession(model: model, logHandler: .silent).respond(to: "Hi", options: brief)
      XCTFail("a negative layer count must be refused by a request")
    } catch HybridInferenceError.invalidOptions {
    }
    XCTAssertNil(model.offload, "nothing was loaded")
  }

  /// `.none`, `.automatic` and `.layers` load and answer; on this build the
  /// decision says where the layers went, and the log says it too.
  func testEachSetting_loadsAndAnswers_andSaysWhereTheLayersAre() async throws {
    let path = try LocalTestModels.require(LocalTestModels.tinyPath)
    let file = try GGUFFile.read(path: path)
    let blocks = try XCTUnwrap(file.architectureInteger("block_count"))
    let offloads = llama_supports_gpu_offload()
    let logs = LogRecorder()
    LocalSystemModel.setLlamaLogHandler(logs.handler)
    defer { LocalSystemModel.setLlamaLogHandler(.silent) }
    for gpu in [GPUOffload.none, .automatic, .layers(3)] {
      let model = LocalSystemModel(modelPath: path, contextSize: 256, threads: 2, gpu: gpu)
      XCTAssertEqual(model.gpu, gpu)
      XCTAssertNil(model.offload, "not loaded yet")
      let answer = try await GenerativeModelSession(model: model, logHandler: .silent).respond(
        to: "Hi", options: brief)
      XCTAssertEqual(answer.rawResponse.placement, .onDevice)
      let decision = try XCTUnwrap(model.offload, "\(gpu)")
      XCTAssertEqual(decision.totalLayers, blocks + 1, "the blocks and the output layer")
      if !offloads || gpu == .none {
        XCTAssertEqual(decision.layers, 0, "\(gpu)")
        XCTAssertEqual(decision.deviceName, "CPU")
        XCTAssertEqual(decision.deviceBytes, 0)
      } else if gpu == .layers(3) {
        XCTAssertEqual(decision.layers, min(3, blocks + 1), "asked for, on a build with a GPU")
        XCTAssertNotEqual(decision.deviceName, "CPU")
      }
    }
    let lines = logs.records.filter { $0.message.hasPrefix("GPU offload: ") }
    XCTAssertFalse(lines.isEmpty, "the decision is logged")
    XCTAssertTrue(lines.allSatisfy { $0.level == .info && $0.category == .local }, "\(lines.map(\.message))")
  }

  /// A state saved with its layers on one backend is not loaded into another.
  func testThePromptCacheKey_differsByBackend() async throws {
    let loaded = try await LocalTestModels.tiny().loadedModel(progress: nil)
    let onCPU = OffloadDecision(OffloadPlan(placement: .cpu, totalLayers: 3, reason: ""))
    let onGPU = OffloadDecision(OffloadPlan(placement: .gpu(device: "Vulkan0", layers: 3), totalLayers: 3, reason: ""))
    let partly = OffloadDecision(OffloadPlan(placement: .gpu(device: "Vulkan0", layers: 2), totalLayers: 3, reason: ""))
    let other = OffloadDecision(OffloadPlan(placement: .gpu(device: "CUDA0", layers: 3), totalLayers: 3, reason: ""))
    let keys = [onCPU, onGPU, partly, other].map {
      PromptCacheKey(model: loaded.fingerprint, offload: $0, flashAttention: LLAMA_FLASH_ATTN_TYPE_ENABLED)
    }
    XCTAssertEqual(Set(keys.map(\.hash)).count, 4, "each backend its own key")
    XCTAssertEqual(
      keys[0], PromptCacheKey(model: loaded.fingerprint, offload: onCPU, flashAttention: LLAMA_FLASH_ATTN_TYPE_ENABLED))
  }

  /// The memory availability counts in this process: what goes to a GPU
  /// is not, so long as it fits there.
  func testRequiredMemory_leavesOutWhatFitsTheGPU() throws {
    let path = try LocalTestModels.require(LocalTestModels.tinyPath)
    let file = try GGUFFile.read(path: path)
    let model = LocalSystemModel(modelPath: path, contextSize: 1 << 20, parallelRequests: 8)
    let cpu = ComputeDevice(name: "CPU", description: "", kind: .cpu, memoryBytes: 1 << 36, freeMemoryBytes: 1 << 35)
    let alone = model.requiredMemory(for: file, loaded: nil, devices: [cpu])
    XCTAssertEqual(alone, file.fileSize + model.kvCacheBytes(for: file))
    let large = ComputeDevice(name: "GPU0", description: "", kind: .gpu, memoryBytes: 1 << 50, freeMemoryBytes: 1 << 49)
    let beside = model.requiredMemory(for: file, loaded: nil, devices: [cpu, large])
    // Every layer's weights but the token embeddings (a tied output layer
    // copies them to the GPU; the CPU keeps its own), and the whole cache.
    let blocks = file.tensorBytes.impliedBlockCount
    let weights = file.tensorBytes.output + file.tensorBytes.blockBytes(count: blocks).reduce(0, +)
    let cache = model.kvCacheBytes(for: file) / blocks * blocks
    XCTAssertEqual(beside, alone - weights - cache)
    XCTAssertLessThan(beside, file.fileSize, "only the token embeddings stay")
    let small = ComputeDevice(name: "GPU0", description: "", kind: .gpu, memoryBytes: 1 << 20, freeMemoryBytes: 1 << 20)
    XCTAssertEqual(model.requiredMemory(for: file, loaded: nil, devices: [cpu, small]), alone, "nothing fits it")
    let forced = LocalSystemModel(modelPath: path, contextSize: 1 << 20, parallelRequests: 8, gpu: .layers(99))
    XCTAssertEqual(
      forced.requiredMemory(for: file, loaded: nil, devices: [cpu, small]), alone,
      "layers forced onto a GPU they do not fit load on the CPU")
  }

  /// The tensor table's bytes by layer add up to no more than the file.
  func testTheTinyModelsLayerBytes() throws {
    let file = try GGUFFile.read(path: try LocalTestModels.require(LocalTestModels.tinyPath))
    let bytes = file.tensorBytes
    let blocks = try XCTUnwrap(file.architectureInteger("block_count"))
    XCTAssertEqual(bytes.impliedBlockCount, blocks)
    XCTAssertTrue(bytes.blockBytes(count: blocks).allSatisfy { $0 > 0 })
    XCTAssertGreaterThan(bytes.tokenEmbedding, 0)
    let total = bytes.blockBytes(count: blocks).reduce(0, +) + bytes.output + bytes.tokenEmbedding
    XCTAssertLessThanOrEqual(total, file.fileSize)
  }
}

/// A GPU that fails at load leaves the model on the CPU: here, a device the
/// registry does not have, which fails the load the way a GPU out of memory does.
final class GPUOffloadFallbackTests: XCTestCase {
  func testALoadThatFailsOnTheGPU_isTriedAgainOnTheCPU_andSaysWhy() throws {
    let path = try LocalTestModels.require(LocalTestModels.tinyPath)
    let file = try GGUFFile.read(path: path)
    let logs = LogRecorder()
    LocalSystemModel.setLlamaLogHandler(logs.handler)
    defer { LocalSystemModel.setLlamaLogHandler(.silent) }
    var options = LlamaModel.LoadOptions(gpu: .layers(3))
    options.offload = OffloadPlan(placement: .gpu(device: "Vulkan9", layers: 3), totalLayers: 3, reason: "a test")
    let model = try LlamaModel(path: path, file: file, options: options, progress: nil)
    XCTAssertEqual(model.offload.layers, 0)
    XCTAssertEqual(model.offload.deviceName, "CPU")
    XCTAssertEqual(model.offload.totalLayers, 3)
    XCTAssertFalse(try model.tokenize("Hi", addSpecial: true, parseSpecial: true).isEmpty, "the model works")
    let warning = try XCTUnwrap(logs.records.first { $0.level == .warning && $0.category == .local })
    XCTAssertTrue(warning.message.contains("Vulkan9 could not load 3 layers; loading on the CPU"), warning.message)
    XCTAssertTrue(logs.records.contains { $0.level == .info && $0.message.hasPrefix("GPU offload: CPU") })
  }
}
