import CLlama
import Foundation
import XCTest

@testable import HybridInferenceLlama

/// Random sampling from the k largest logits draws the token llama.cpp's
/// chain draws from the whole vocabulary, and leaves every case where the
/// two could order the candidates differently to llama.cpp.
final class TopKPickTests: XCTestCase {
  private func indices(_ logits: [Float], _ count: Int) -> [Int]? {
    logits.withUnsafeBufferPointer { TopKPick.indices(in: $0, count: count) }
  }

  /// The `count` largest by a full sort, largest first.
  private func reference(_ logits: [Float], _ count: Int) -> [Int] {
    Array(logits.indices.sorted { logits[$0] > logits[$1] }.prefix(count))
  }

  func testDistinctLogits_giveTheLargestInOrder_atEveryLengthAndCount() {
    var generator = SystemRandomNumberGenerator()
    for length in [2, 17, 100, 1_000, 49_152] {
      for count in [1, 5, 16, 40, 128] where count < length {
        let logits = (0..<length).map { Float($0) * 0.25 - 100 }.shuffled(using: &generator)
        XCTAssertEqual(indices(logits, count), reference(logits, count), "length \(length), count \(count)")
      }
    }
  }

  func testTies_orNaNs_leaveThePickToLlamaCpp() {
    let base = (0..<200).map { Float($0) }
    var inside = base
    inside[150] = 170  // equal to another of the 40 largest
    XCTAssertNil(indices(inside, 40), "a tie among the chosen")
    var boundary = base
    boundary[10] = 160  // equal to the 40th largest, left outside
    XCTAssertNil(indices(boundary, 40), "a tie at the boundary")
    var below = base
    below[10] = 20  // ties with 20, both far below the chosen
    XCTAssertEqual(indices(below, 40), reference(below, 40), "a tie below the boundary does not matter")
    var nan = base
    nan[3] = .nan
    XCTAssertNil(indices(nan, 40), "a NaN anywhere")
    var infinite = base
    infinite[7] = .infinity
    XCTAssertEqual(indices(infinite, 40)?.first, 7)
    infinite[9] = .infinity
    XCTAssertNil(indices(infinite, 40), "two infinities tie")
  }

  func testCountsOutsideTheSortedRange_areLeftToLlamaCpp() {
    let logits = (0..<300).map { Float($0) }
    XCTAssertNil(indices(logits, 0))
    XCTAssertNil(indices(logits, -1))
    XCTAssertNil(indices(logits, 129), "llama.cpp sorts by buckets past 128")
    XCTAssertNotNil(indices(logits, 128))
    XCTAssertNil(indices(Array(logits.prefix(40)), 40), "k not smaller than the vocabulary")
  }

  /// On a real model, two chains of the same samplers and seed, one given
  /// the whole vocabulary by `llama_sampler_sample` and one the k largest by
  /// `TopKPick`, draw the same token at every step.
  func testARealModelsLogits_drawWhatTheWholeVocabularyDraws() async throws {
    let mismatch = try await LocalTestModels.onTinyContext { context in
      // The default chain's shape, and `.random(top:seed:)`'s with a high temperature.
      for (top, topP, temperature) in [(Int32(40), Float(0.95), Float(0.8)), (5, 1, 3)] {
        guard let whole = Self.chain(top: top, topP: topP, temperature: temperature) else { return "no sampler" }
        defer { llama_sampler_free(whole) }
        guard let short = Self.chain(top: top, topP: topP, temperature: temperature) else { return "no sampler" }
        defer { llama_sampler_free(short) }
        var buffer: [llama_token_data] = []
        var (token, shortPicks): (llama_token, Int) = (1, 0)
        llama_memory_clear(llama_get_memory(context), true)
        for step in 0..<60 {
          guard llama_decode(context, llama_batch_get_one(&token, 1)) == 0 else { return "decode \(step)" }
          var pick: llama_token?
          do {
            pick = try TopKPick.sample(
              chain: short, logits: SamplerChain.logits(context, at: -1), count: Int(top), buffer: &buffer)
          } catch {
            return "top \(top), step \(step): \(error)"
          }
          if pick != nil { shortPicks += 1 } else { pick = llama_sampler_sample(short, context, -1) }
          let expected = llama_sampler_sample(whole, context, -1)
          guard pick == expected else { return "top \(top), step \(step): \(String(describing: pick)) vs \(expected)" }
          token = expected
        }
        // The tiny model's logits rarely tie: the short path must have been taken.
        guard shortPicks > 30 else { return "top \(top): the k largest were used at \(shortPicks) of 60 steps" }
      }
      return nil
    }
    XCTAssertNil(mismatch)
  }

  private static func chain(top: Int32, topP: Float, temperature: Float) -> UnsafeMutablePointer<llama_sampler>? {
    var params = llama_sampler_chain_default_params()
    params.no_perf = true
    guard let chain = llama_sampler_chain_init(params) else { return nil }
    llama_sampler_chain_add(chain, llama_sampler_init_top_k(top))
    if topP < 1 { llama_sampler_chain_add(chain, llama_sampler_init_top_p(topP, 1)) }
    llama_sampler_chain_add(chain, llama_sampler_init_temp(temperature))
    llama_sampler_chain_add(chain, llama_sampler_init_dist(42))
    return chain
  }
}
