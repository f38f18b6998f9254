import CLlama
import Foundation
import XCTest

@testable import HybridInferenceLlama

/// The greedy fast path picks the token llama.cpp's greedy sampler picks:
/// from stated logits (ties, NaNs, infinities, tails past the last 16) and
/// from a real model's logits, step after step.
final class GreedyPickTests: XCTestCase {
  private func pick(_ logits: [Float]) -> Int? {
    logits.withUnsafeBufferPointer { GreedyPick.index(in: $0) }
  }

  /// llama.cpp's greedy apply, as written in llama-sampler.cpp.
  private func reference(_ logits: [Float]) -> Int {
    var selected = 0
    for index in logits.indices.dropFirst() where logits[index] > logits[selected] { selected = index }
    return selected
  }

  func testTheFirstOfTheLargest_isPicked_atEveryPlaceAndLength() {
    for count in [1, 2, 15, 16, 17, 31, 32, 33, 100, 49_152] {
      for place in Set([0, count / 2, count - 1]) {
        var logits = (0..<count).map { Float($0 % 7) - 3 }
        logits[place] = 9
        XCTAssertEqual(pick(logits), place, "count \(count), largest at \(place)")
        if place + 5 < count {
          logits[place + 5] = 9  // a tie later: the first stays
          XCTAssertEqual(pick(logits), place, "count \(count), tie after \(place)")
        }
      }
    }
  }

  func testNaNsAndInfinities_pickAsLlamaCppDoes() {
    var logits = [Float](repeating: -.infinity, count: 40)
    XCTAssertEqual(pick(logits), 0, "all -inf: token 0, as llama.cpp")
    logits[20] = .nan
    logits[37] = -1
    XCTAssertEqual(pick(logits), 37, "a NaN never wins")
    XCTAssertEqual(pick(logits), reference(logits))
    logits[3] = .infinity
    XCTAssertEqual(pick(logits), 3)
    logits[0] = .nan
    XCTAssertNil(pick(logits), "a NaN first is left to llama.cpp")
    XCTAssertNil(pick([]))
  }

  func testRandomLogits_agreeWithLlamaCppsRule() {
    var generator = SystemRandomNumberGenerator()
    for round in 0..<200 {
      let count = Int.random(in: 1...300, using: &generator)
      // Few distinct values, so that ties are common.
      var logits = (0..<count).map { _ in Float(Int.random(in: -4...4, using: &generator)) }
      if round % 3 == 0 { logits[Int.random(in: 1..<max(2, count), using: &generator) % count] = .nan }
      guard !logits[0].isNaN else { continue }
      XCTAssertEqual(pick(logits), reference(logits), "\(logits)")
    }
  }

  /// On a real model, each step's pick equals `llama_sampler_sample` with
  /// the greedy sampler on the same logits, and decoding it goes on.
  func testARealModelsLogits_pickWhatTheGreedySamplerPicks() async throws {
    let mismatch = try await LocalTestModels.onTinyContext { context in
      var chainParams = llama_sampler_chain_default_params()
      chainParams.no_perf = true
      guard let chain = llama_sampler_chain_init(chainParams) else { return "no sampler" }
      defer { llama_sampler_free(chain) }
      llama_sampler_chain_add(chain, llama_sampler_init_greedy())
      var token: llama_token = 1
      for step in 0..<40 {
        guard llama_decode(context, llama_batch_get_one(&token, 1)) == 0 else { return "decode \(step)" }
        guard let logits = try? SamplerChain.logits(context, at: -1), let fast = GreedyPick.index(in: logits) else {
          return "no pick at \(step)"
        }
        let slow = llama_sampler_sample(chain, context, -1)
        guard fast == Int(slow) else { return "step \(step): \(fast) vs \(slow)" }
        token = slow
      }
      return nil
    }
    XCTAssertNil(mismatch)
  }
}
