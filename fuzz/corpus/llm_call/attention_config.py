import os
os.environ['VLLM_USE_FLASHINFER_SAMPLER'] = '0'
llm = LLM(model='deepseek-ai/DeepSeek-V4-Pro', attention_config={'use_fp4_indexer_cache': True, 'note': "it's"}, tensor_parallel_size=8)
