// Internal to tune_core (not installed): what the `bayes` strategy (strategy_bayes.cpp) computes
// of the space and its outcomes apart from its choices: the model's coordinates of each config,
// the grid of length scales, each param's relevance by the marginal likelihood, the local moves
// around a config and their kinds, the start's farthest pick, the training set, and expected
// improvement.
#pragma once

#include <cstddef>
#include <optional>
#include <utility>
#include <vector>

#include <Eigen/Core>

#include <tuner/core/search/strategy.hpp>

namespace tune::detail {

/// The model's coordinates of each config (a row each): an ordered param's position scaled to
/// [0, 1] (0.5 where the config lacks it), a categorical param's value as one column per
/// category, 1/sqrt(2) in its own and 0 in the others, so that two different categories are 1
/// apart, as the ends of an ordered param are. `groups` gets each column's param.
Eigen::MatrixXd encoding_of(const SpaceIndex& space, std::vector<std::size_t>& groups);

/// The grid of length scales, in units of the diagonal of the unit cube of the space's params.
std::vector<double> lengths_of(const SpaceIndex& space);

/// The configs that differ from `k` in the values of exactly `params` params (1 or 2), in the
/// order of the params and their values.
std::vector<std::size_t> moves(const SpaceIndex& space, std::size_t k, int params);

/// Whether config `b` is a trade-off move of config `a`: they differ in exactly two params, both
/// ordered with at least three values, one moved up its value list and the other down (more of
/// one budget for less of another: threads for work per thread, rows of a block for rows of a
/// thread).
bool trade_off(const SpaceIndex& space, std::size_t a, std::size_t b);

/// Of `candidates` (rows of `points`), the one farthest from its nearest config of `seen` (the
/// first on a tie); nullopt when there are none. With `seen` empty, the first candidate.
std::optional<std::size_t> farthest(const Eigen::MatrixXd& points,
                                    const std::vector<std::size_t>& candidates,
                                    const std::vector<std::size_t>& seen);

/// The configs of the outcomes `observed` (config, value; in the order told) that a model of at
/// most `cap` fits to: every one while there are at most `cap`, else the best half (an invalid
/// outcome is worst; ties: the earlier told) and the most recent ones, in the order told.
std::vector<std::size_t> training_set(
    const std::vector<std::pair<std::size_t, std::optional<double>>>& observed, std::size_t cap);

/// Expected improvement of a prediction `gain` below the best (in standard deviations of the
/// values: best - mean - margin) with standard deviation `sigma`.
double expected_improvement(double gain, double sigma);

/// Each param's relevance (a factor on its coordinates, within [1/8, 8]) by the marginal
/// likelihood of `y` (standardized values of the configs `sample`) under the coordinates `base`
/// (encoding_of, with its `groups`) scaled by it: the best length scale of `lengths` for
/// `start`, then each relevance halved or doubled while that helps (two sweeps).
std::vector<double> choose_relevance(const Eigen::MatrixXd& base,
                                     const std::vector<std::size_t>& groups,
                                     const std::vector<std::size_t>& sample,
                                     const Eigen::VectorXd& y, const std::vector<double>& lengths,
                                     double noise, std::vector<double> start);

}  // namespace tune::detail
