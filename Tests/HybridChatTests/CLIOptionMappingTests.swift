import HybridChatCore
import HybridInferenceCore
import HybridInferenceGemini
import HybridInferenceLlama
import HybridInferenceOpenAI
import HybridInferenceRemote
import XCTest

/// The flags reach both models, each in its own vocabulary.
final class CLIOptionMappingTests: XCTestCase {
  func testNoFlagsLeaveBothModelsAtTheirDefaults() {
    XCTAssertEqual(ChatOptions().generationOptions, .default)
  }

  func testCloudHalfTakesEveryFlag() {
    let options = ChatOptions(
      temperature: 0.5, topP: 0.8, topK: 20, seed: 3, maxTokens: 100, thinking: .low)
    XCTAssertEqual(
      options.generationOptions.gemini,
      GenerationConfig(
        temperature: 0.5, topP: 0.8, topK: 20, maxOutputTokens: 100, seed: 3,
        thinkingConfig: ThinkingConfig(thinkingLevel: .low)))
  }

  func testTemperatureZeroIsGreedyOnDevice() {
    let options = ChatOptions(temperature: 0, topP: 0.9, topK: 5, seed: 1, maxTokens: 8)
    XCTAssertEqual(
      options.generationOptions.foundationModels,
      GenerationOptions(sampling: .greedy, temperature: 0, maximumResponseTokens: 8))
  }

  func testTopKWithSeed() {
    XCTAssertEqual(
      ChatOptions(topK: 40, seed: 9).generationOptions.foundationModels,
      GenerationOptions(sampling: .random(top: 40, seed: 9)))
  }

  func testTopPWithSeed() {
    XCTAssertEqual(
      ChatOptions(temperature: 0.7, topP: 0.9, seed: 9).generationOptions.foundationModels,
      GenerationOptions(sampling: .random(probabilityThreshold: 0.9, seed: 9), temperature: 0.7))
  }

  func testTopKWinsOverTopPOnDeviceAndBothReachTheCloud() {
    let options = ChatOptions(topP: 0.9, topK: 40).generationOptions
    XCTAssertEqual(options.foundationModels, GenerationOptions(sampling: .random(top: 40)))
    XCTAssertEqual(options.gemini, GenerationConfig(topP: 0.9, topK: 40))
  }

  func testSeedAloneKeepsTheDefaultThresholdWithTheSeed() {
    let options = ChatOptions(seed: 1).generationOptions
    XCTAssertEqual(
      options.foundationModels,
      GenerationOptions(sampling: .random(probabilityThreshold: 0.95, seed: 1)))
    XCTAssertEqual(options.gemini, GenerationConfig(seed: 1))
  }

  func testMaxTokensAndTemperatureOnly() {
    let options = ChatOptions(temperature: 1.2, maxTokens: 16).generationOptions
    XCTAssertEqual(
      options.foundationModels, GenerationOptions(temperature: 1.2, maximumResponseTokens: 16))
    XCTAssertEqual(options.gemini, GenerationConfig(temperature: 1.2, maxOutputTokens: 16))
  }

  func testThinkingReachesOnlyTheCloud() {
    let options = ChatOptions(thinking: .minimal).generationOptions
    XCTAssertNil(options.foundationModels)
    XCTAssertEqual(options.gemini?.thinkingConfig?.thinkingLevel, .minimal)
  }

  func testDefaultModeFollowsTheKey() {
    XCTAssertEqual(InferenceMode.defaultMode(cloudKeyIsSet: true), .preferOnDevice)
    XCTAssertEqual(InferenceMode.defaultMode(cloudKeyIsSet: false), .onlyOnDevice)
  }
}
