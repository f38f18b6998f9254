import Foundation
import TestPrerequisites
import XCTest

@testable import HybridInferenceCore
@testable import HybridInferenceGemini
@testable import HybridInferenceJinja
@testable import HybridInferenceLlama
@testable import HybridInferenceOpenAI
@testable import HybridInferenceRemote

/// Structurally valid GGUF files whose contents would trip a llama.cpp assert
/// (and abort the test process) are refused before llama.cpp sees them.
///
/// The files come from scripts/make-crafted-models.py, run once per test process
/// with the repository's Python venv; scripts/probe-crafted-models.sh shows which
/// of them abort an unchecked llama.cpp.
final class ModelFileContentTests: XCTestCase {
  /// Each crafted kind and a fragment of the reason it must be refused with.
  static let refusals: [String: String] = [
    "expert-used-without-experts": "llama.expert_used_count is 4 but llama.expert_count is 0",
    "expert-used-over-count": "llama.expert_used_count is 4 but llama.expert_count is 2",
    "expert-count-too-large": "llama.expert_count is 4096",
    "expert-groups-without-experts": "llama.expert_group_count is 2 but the model has no experts",
    "block-count-zero": "llama.block_count is 0",
    "block-count-too-large": "llama.block_count is 100000",
    "nextn-layers-over-block-count": "llama.nextn_predict_layers is 5",
    "rope-scaling-unknown": "llama.rope.scaling.type is 'bogus'",
    "context-length-zero": "llama.context_length is 0",
    "head-count-zero": "llama.attention.head_count must be the same positive number",
    "head-count-kv-not-dividing": "4 is not a multiple of 3",
    "head-count-kv-array-with-zero": "llama.attention.head_count_kv must be the same positive number",
    "head-count-array-wrong-length": "llama.attention.head_count has 3 entries but the model has 2 layers",
    "key-value-length-differ": "key heads are 16 wide and value heads 8",
    "vocab-duplicate-token": "lists the token",
    "vocab-scores-shorter": "but tokenizer.ggml.scores has 326 entries",
    "vocab-types-shorter": "but tokenizer.ggml.token_type has 10 entries",
    "special-token-out-of-range": "tokenizer.ggml.bos_token_id is 1653, outside the vocabulary of 653 tokens",
    "eos-token-out-of-range": "tokenizer.ggml.eos_token_id is 653",
    "tokenizer-unknown": "unknown tokenizer 'klingon'",
    "spm-byte-tokens-missing": "has no token for byte 0x80 (neither <0x80> nor the byte itself) and 114 more",
    "t5-charsmap-out-of-bounds": "tokenizer.ggml.precompiled_charsmap is corrupt (node 16 of 16)",
    "bos-added-but-missing": "adds a bos token to every prompt but tokenizer.ggml.bos_token_id is missing",
    "tensor-shape-mismatch": "tensor blk.1.attn_q.weight is [32, 64] but the hyper-parameters make it [64, 64]",
    "embedding-rows-not-vocab": "tensor token_embd.weight is [64, 646]",
    "architecture-unknown":
      "unknown architecture 'tinyllama-from-the-future': llama.cpp \(LlamaBuildInfo.linkedVersion) cannot run it",
    "alignment-not-uint32": "general.alignment has GGUF type 10, not uint32 (4)",
    "split-in-two": "part of a model split in 2 files",
  ]

  /// Crafted files that are odd but sound: llama.cpp runs them, so must the library.
  static let accepted: Set<String> = ["embedding-not-divisible-by-heads"]

  override class func tearDown() {
    if case .success(let output) = GeneratedFiles.craftedModels.output {
      try? FileManager.default.removeItem(atPath: output.directory)
    }
    super.tearDown()
  }

  func testEveryCraftedKindIsCovered() throws {
    let kinds = try GeneratedFiles.craftedModels.get().kinds
    XCTAssertGreaterThanOrEqual(kinds.count, 6)
    XCTAssertEqual(
      Set(kinds), Set(Self.refusals.keys).union(Self.accepted).union(HostileInputTests.overflowingKinds.keys))
  }

  func testEachCraftedFileIsRefusedWithItsReason() async throws {
    let crafted = try GeneratedFiles.craftedModels.get()
    for (kind, expected) in Self.refusals.sorted(by: { $0.key < $1.key }) {
      let path = crafted.directory + "/\(kind).gguf"
      let model = LocalSystemModel(modelPath: path)
      XCTAssertEqual(model.availability, .unavailable(.modelNotReady), kind)
      do {
        try await model.prepare()
        XCTFail("\(kind) must be refused")
      } catch HybridInferenceError.invalidModelFile(let refusedPath, let reason) {
        XCTAssertEqual(refusedPath, path, kind)
        XCTAssertTrue(reason.contains(expected), "\(kind): reason was: \(reason)")
      } catch {
        XCTFail("\(kind): unexpected error \(error)")
      }
    }
  }

  /// Reasons name the llama.cpp actually linked (`llama_version()`), not a
  /// version written in the library.
  func testLinkedVersion_isReadFromTheLibrary() {
    let version = LlamaBuildInfo.linkedVersion
    XCTAssertNotNil(version.range(of: #"^[0-9]+\.[0-9]+\.[0-9]+"#, options: .regularExpression), version)
  }

  /// The check refuses what llama.cpp asserts on, not what is merely unusual.
  func testSoundVariantStillLoads() async throws {
    let crafted = try GeneratedFiles.craftedModels.get()
    for kind in Self.accepted {
      let model = LocalSystemModel(modelPath: crafted.directory + "/\(kind).gguf", contextSize: 256, threads: 1)
      XCTAssertEqual(model.availability, .available, kind)
      try await model.prepare()
    }
  }

  /// The generated tiny model and the default model pass the content check.
  func testRealModelsPass() throws {
    for path in [LocalTestModels.tinyPath, LocalTestModels.defaultPath] {
      XCTAssertEqual(LocalSystemModel(modelPath: try LocalTestModels.require(path)).availability, .available, path)
    }
  }

  func testPreferOnDevice_craftedFile_answeredByCloud() async throws {
    let path = try GeneratedFiles.craftedModels.get().directory + "/expert-used-without-experts.gguf"
    let cloud = ScriptedModel("cloud", placement: .cloud, script: [.answer(["from the cloud"])])
    let session = GenerativeModelSession(
      model: .hybridModel(primary: LocalSystemModel(modelPath: path), secondary: cloud),
      logHandler: .silent)
    let response = try await session.respond(to: "Hello")
    XCTAssertEqual(response.rawResponse.modelVersion, "cloud")
  }
}
