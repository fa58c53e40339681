// Which function calls are aggregates: by syntax (`*`, DISTINCT, FILTER, WITHIN GROUP, ORDER BY
// in the call) or by name. One list for statement analysis and multi-node planning alike.
import type { FuncCall } from 'libpg-query';
import { stringList } from './ast.js';

const AGGREGATE_NAMES: ReadonlySet<string> = new Set([
  'count',
  'sum',
  'avg',
  'min',
  'max',
  'array_agg',
  'string_agg',
  'bool_and',
  'bool_or',
  'every',
  'bit_and',
  'bit_or',
  'bit_xor',
  'json_agg',
  'jsonb_agg',
  'json_object_agg',
  'jsonb_object_agg',
  'json_agg_strict',
  'jsonb_agg_strict',
  'json_object_agg_strict',
  'jsonb_object_agg_strict',
  'json_object_agg_unique',
  'jsonb_object_agg_unique',
  'json_object_agg_unique_strict',
  'jsonb_object_agg_unique_strict',
  'xmlagg',
  'stddev',
  'stddev_pop',
  'stddev_samp',
  'variance',
  'var_pop',
  'var_samp',
  'corr',
  'covar_pop',
  'covar_samp',
  'regr_avgx',
  'regr_avgy',
  'regr_count',
  'regr_intercept',
  'regr_r2',
  'regr_slope',
  'regr_sxx',
  'regr_sxy',
  'regr_syy',
  'mode',
  'percentile_cont',
  'percentile_disc',
  'rank',
  'dense_rank',
  'percent_rank',
  'cume_dist',
  'range_agg',
  'range_intersect_agg',
  'any_value',
]);

/**
 * True when the call is an aggregate by its syntax or its (last, lower-cased) name. Whether it is
 * used as a window function (`over`) is the caller's question.
 */
export function isAggregateSyntax(f: FuncCall): boolean {
  const names = stringList(f.funcname);
  const name = (names[names.length - 1] ?? '').toLowerCase();
  return (
    f.agg_star === true ||
    f.agg_distinct === true ||
    f.agg_within_group === true ||
    f.agg_filter !== undefined ||
    (f.agg_order?.length ?? 0) > 0 ||
    AGGREGATE_NAMES.has(name)
  );
}
