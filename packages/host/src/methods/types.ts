import type { z } from 'zod'
import type { METHODS, MethodName, ResultOf } from '@dsh/host-api'

/** A method's params after validation (defaults applied). */
export type In<M extends MethodName> = z.output<typeof METHODS[M]['params']>
/** What a method's handler returns (the table's result, as the client will read it). */
export type Out<M extends MethodName> = ResultOf<M>
