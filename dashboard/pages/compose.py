import streamlit as st

st.header('Compose')
st.info('Coming soon.')
