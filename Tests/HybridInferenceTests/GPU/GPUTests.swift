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
/// Besides lone answers, what else the device does must work with every
/// layer of the tiny model on the GPU (`.layers(99)`): sessions decoded
/// together, answers that follow a schema, tool calls and the prompt cache.
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

  // MARK: What else the device does, on the GPU

  private static func tinyOnGPU(
    contextSize: Int = 512, parallelRequests: Int = 4, promptCache: PromptCache? = nil,
    flashAttention: FlashAttention = .automatic
  ) throws -> LocalSystemModel {
    LocalSystemModel(
      modelPath: try LocalTestModels.require(LocalTestModels.tinyPath), contextSize: contextSize, threads: 2,
      parallelRequests: parallelRequests, promptCache: promptCache, flashAttention: flashAttention, gpu: .layers(99))
  }

  /// The offload the model decided once loaded: every layer on the GPU ggml offers.
  private func assertWhollyOnTheGPU(_ model: LocalSystemModel, file: StaticString = #filePath, line: UInt = #line)
    throws
  {
    let device = try gpu()
    let offload = try XCTUnwrap(model.offload, file: file, line: line)
    XCTAssertEqual(offload.deviceName, device.name, file: file, line: line)
    XCTAssertEqual(offload.layers, offload.totalLayers, file: file, line: line)
  }

  // MARK: Batched sessions

  /// Each ask has instructions of its own, so no session reuses cells
  /// another computed (a prefix computed in another batch could flip a near tie).
  private static func answer(_ prompt: String, on model: LocalSystemModel) async throws -> String {
    let session = GenerativeModelSession(model: model, instructions: "Answer \(prompt.count).", logHandler: .silent)
    return try await session.respond(to: prompt, options: greedy(16)).content
  }

  /// Three sessions answering at once share the GPU's decode steps, and each
  /// gets the greedy text it gets alone on the same model.
  func testThreeSessionsDecodedTogether_onTheGPU_eachGetTheTextItGetsAlone() async throws {
    let model = try Self.tinyOnGPU(parallelRequests: 3)
    let prompts = [
      "What is the capital of France?", "Write a haiku about autumn.", "List three fruits and their colours.",
    ]
    var alone: [String] = []
    for prompt in prompts { alone.append(try await Self.answer(prompt, on: model)) }
    XCTAssertEqual(try XCTUnwrap(model.batchedContext?.steps).widest, 1, "one session at a time decodes alone")
    let together = try await withThrowingTaskGroup(of: (Int, String).self) { group in
      for (index, prompt) in prompts.enumerated() {
        group.addTask { (index, try await Self.answer(prompt, on: model)) }
      }
      var answers = Array(repeating: "", count: prompts.count)
      for try await (index, text) in group { answers[index] = text }
      return answers
    }
    XCTAssertEqual(try XCTUnwrap(model.batchedContext?.steps).widest, 3, "the sessions shared decode steps")
    for (index, pair) in zip(alone, together).enumerated() {
      XCTAssertFalse(pair.0.isEmpty, "session \(index)")
      XCTAssertEqual(pair.1, pair.0, "session \(index): batched on the GPU differs from alone")
    }
    try assertWhollyOnTheGPU(model)
  }

  // MARK: Structured output

  /// A schema known only at run time: the GPU's answer follows it and
  /// decodes, and is the CPU's for the same seed.
  func testAStructuredAnswer_onTheGPU_decodes_andIsTheCPUs() async throws {
    let schema = try GenerationSchema(
      jsonSchema: #"""
        {"type":"object","properties":{"name":{"type":"string","maxLength":12},"count":{"type":"integer"},
        "ok":{"type":"boolean"},"tags":{"type":"array","items":{"type":"string","enum":["alpha","beta"]},"maxItems":3}},
        "required":["name","count","ok","tags"]}
        """#)
    // Room for the schema the prompt carries in the tiny vocabulary.
    let onGPU = try Self.tinyOnGPU(contextSize: 1024)
    let onCPU = LocalSystemModel(
      modelPath: try LocalTestModels.require(LocalTestModels.tinyPath), contextSize: 1024, threads: 2, gpu: .none)
    for seed in 0..<3 {
      let options = HybridGenerationOptions.foundationModels(
        GenerationOptions(sampling: .random(top: 40, seed: UInt64(seed)), maximumResponseTokens: 200))
      let gpu = try await GenerativeModelSession(model: onGPU, logHandler: .silent).respond(
        to: "Describe a record", schema: schema, options: options)
      guard case .object(let fields) = gpu.content else { return XCTFail("seed \(seed): \(gpu.jsonText)") }
      XCTAssertEqual(Set(fields.keys), ["name", "count", "ok", "tags"], "seed \(seed): \(gpu.jsonText)")
      guard case .string(let name) = fields["name"], case .bool = fields["ok"], case .array(let tags) = fields["tags"]
      else { return XCTFail("seed \(seed): \(gpu.jsonText)") }
      switch fields["count"] {
      case .number(let count): XCTAssertEqual(count.rounded(), count, "seed \(seed): an integer")
      case .exactInteger: break  // an integer beyond 2^53, as its digits
      default: XCTFail("seed \(seed): count is no integer in \(gpu.jsonText)")
      }
      XCTAssertLessThanOrEqual(name.unicodeScalars.count, 12, "seed \(seed)")
      XCTAssertTrue(tags.allSatisfy { $0 == .string("alpha") || $0 == .string("beta") }, "seed \(seed)")
      XCTAssertLessThanOrEqual(tags.count, 3)
      XCTAssertEqual(gpu.rawResponse.modelVersion, LocalSystemModel.modelVersion)
      let cpu = try await GenerativeModelSession(model: onCPU, logHandler: .silent).respond(
        to: "Describe a record", schema: schema, options: options)
      XCTAssertEqual(gpu.jsonText, cpu.jsonText, "seed \(seed): the GPU's JSON and the CPU's")
    }
    try assertWhollyOnTheGPU(onGPU)
  }

  // MARK: Tools

  /// A forced call on the GPU runs the tool with the arguments the model
  /// wrote, and the round after it is text.
  func testAForcedToolCall_onTheGPU_runsTheTool() async throws {
    let model = try Self.tinyOnGPU(contextSize: 2048)
    let weather = WeatherTool()
    let session = GenerativeModelSession(model: model, tools: [weather], logHandler: .silent)
    let options = HybridGenerationOptions(
      foundationModels: GenerationOptions(sampling: .random(top: 40, seed: 1), maximumResponseTokens: 400),
      toolChoice: .required)
    let answer = try await session.respond(to: "Weather in Paris?", options: options)
    XCTAssertEqual(weather.log.all.count, 1, "the forced call ran the tool once")
    let entries = session.transcript.entries
    XCTAssertGreaterThanOrEqual(entries.count, 4)
    let call = try XCTUnwrap(entries.dropFirst().first?.toolCalls.first)
    XCTAssertEqual(call.name, "get_weather")
    let decoded = try JSONDecoder().decode(CityArguments.self, from: Data(call.argumentsJSON.utf8))
    XCTAssertEqual(weather.log.all.first?.arguments, decoded.city)
    XCTAssertTrue(answer.rawResponse.functionCalls.isEmpty, "the final round is text")
    XCTAssertEqual(entries.last?.text, answer.content)
    try assertWhollyOnTheGPU(model)
  }

  // MARK: Prompt cache

  /// A state saved with every layer on the GPU is keyed by that placement:
  /// a CPU model of the same file (`.none`) does not load it and saves its
  /// own, while another GPU model of the file loads it and answers the same.
  /// One attention setting for all three, so the placement is all that differs.
  func testAPromptCacheStateSavedOnTheGPU_isNotLoadedOnTheCPU() async throws {
    let directory = URL(fileURLWithPath: NSTemporaryDirectory())
      .appendingPathComponent("gpu-prompt-cache-\(getpid())-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: directory) }
    let cache = PromptCache.directory(directory)
    func keys() -> Set<Substring> {
      let files = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
      return Set(files.filter { $0.hasSuffix(".kv") }.map { $0.prefix { $0 != "-" } })
    }
    var transcript = Transcript(
      instructions:
        "You are a careful assistant. You answer questions about the weather, in one short sentence, without any greeting."
    )
    transcript.entries = [.prompt("Question: is it sunny in city number 7?")]
    let options = Self.greedy(8)

    let onGPU = try Self.tinyOnGPU(promptCache: cache, flashAttention: .off)
    let saved = try await PromptCacheTests.answer(transcript, on: onGPU, options: options)
    try assertWhollyOnTheGPU(onGPU)
    let gpuKeys = keys()
    XCTAssertEqual(gpuKeys.count, 1, "the GPU's states are on disk under one key")

    let onCPU = LocalSystemModel(
      modelPath: try LocalTestModels.require(LocalTestModels.tinyPath), contextSize: 512, threads: 2,
      promptCache: cache, flashAttention: .off, gpu: .none)
    let cpu = try await PromptCacheTests.answer(transcript, on: onCPU, options: options)
    XCTAssertEqual(cpu.cached, 0, "the GPU's state is not loaded on the CPU: \(cpu.log)")
    XCTAssertEqual(onCPU.offload?.layers, 0)
    XCTAssertEqual(keys().subtracting(gpuKeys).count, 1, "the CPU saved its own states under another key")

    let again = try Self.tinyOnGPU(promptCache: cache, flashAttention: .off)
    let reloaded = try await PromptCacheTests.answer(transcript, on: again, options: options)
    XCTAssertGreaterThan(reloaded.cached, 20, "another GPU model loads the GPU's state: \(reloaded.log)")
    XCTAssertEqual(reloaded.text, saved.text)
  }
}
