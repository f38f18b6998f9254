import CLlama
import Foundation
import XCTest

@testable import HybridInferenceCore
@testable import HybridInferenceLlama

/// A sampler asked for a token whose logits llama.cpp does not hold ends in
/// a typed error. `llama_sampler_sample` asserts that they exist (a C
/// abort), so before `SamplerChain.logits` checked, this ended the process:
/// hence the child.
final class SamplerChainTests: XCTestCase {
  func testAnIndexWithoutLogits_throws_withEveryKindOfSampling() async throws {
    try await ChildProcess.assertPasses(self) {
      let failures = try await LocalTestModels.onTinyContext { context in
        var token: llama_token = 1
        guard llama_decode(context, llama_batch_get_one(&token, 1)) == 0 else { return "decode" }
        let samplings: [GenerationOptions.SamplingMode?] = [
          nil, .greedy, .random(top: 5, seed: 1), .random(probabilityThreshold: 0.9, seed: 1),
        ]
        var failures: [String] = []
        for sampling in samplings {
          do {
            let chain = try SamplerChain(options: GenerationOptions(sampling: sampling))
            // The batch had one token, so its only logits are at index 0.
            failures.append("\(String(describing: sampling)): sampled \(try chain.sample(context, at: 7))")
          } catch {
            guard case .generationFailed(let message)? = error as? HybridInferenceError, message.contains("no logits")
            else {
              failures.append("\(String(describing: sampling)): \(error)")
              continue
            }
          }
        }
        return failures.isEmpty ? nil : failures.joined(separator: "; ")
      }
      XCTAssertNil(failures)
    }
  }
}
